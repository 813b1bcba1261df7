//! The last stage: the table checked by the loader itself. The circuit is loaded again with
//! the table appended to its text (its includes read from the same folder), so a checkpoint
//! added at run time ([`Circuit::with_config`], [`Circuit::with_imported`]) or the dims of a
//! generated checkpoint's plan ([`Circuit::dims_from_config`]) pass every check of the loader,
//! exactly when `import`'s table would.
//!
//! Invariants:
//! - A table the loader refuses is reported with the loader's own errors, each blamed on the
//!   config (`blame`), after one that names the config and shows the table.
//! - A checkpoint of the same name that the circuit already has is accepted only when its
//!   figures are the config's; a refusal of the whole checkpoint (figures that differ from it or
//!   from a generated plan's) is located at the config key it comes from.
//! - Nothing here changes the circuit it is called on.

use crate::load::text::diag::{Diagnostic, Diagnostics, Source};
use crate::load::{Circuit, CircuitSource, load};

use super::import::{ImportOptions, import};
use super::table::Imported;

impl Circuit {
    /// This circuit with one more checkpoint: the one `config` (a `config.json`'s text, named
    /// as the user gave it) describes, read through `[config]` as [`import`] reads it and named
    /// as `options` say (`stem`, the config file's stem, is the name of last resort). Returns
    /// the circuit and the new checkpoint's name, which [`Circuit::instantiate`] and the
    /// dynamic plan take.
    ///
    /// The circuit is loaded again with the table [`Imported::to_toml`] prints appended to its
    /// text (its includes read from the same folder), so the checkpoint passes every check of
    /// the loader: names, limits, derived dims, windows, every shape evaluated without
    /// overflow.
    ///
    /// # Errors
    /// Those of [`import`]; a checkpoint of that name already in the circuit; and every error
    /// the loader finds in the circuit with the table, after one that names the config and
    /// shows the table.
    pub fn with_config(
        &self,
        config: &Source,
        stem: &str,
        options: ImportOptions<'_>,
    ) -> Result<(Circuit, String), Diagnostics> {
        let imported = import(self, config, stem, options)?;
        let with = self.with_imported(&imported, config)?;
        Ok((with, imported.name))
    }

    /// This circuit with the checkpoint `imported` (read from `config`) added, through every
    /// check of the loader: [`Circuit::with_config`] once the config is read. `metrale-codegen
    /// import` prints a table only when this accepts it. A checkpoint of the same name that
    /// the circuit already has is accepted when its figures (layer kinds and dims) are the
    /// config's: the config re-reads it (the zoo's configs pin its checkpoints that way).
    ///
    /// # Errors
    /// A checkpoint of that name already in the circuit with other figures; every error the
    /// loader finds in the circuit with the table, after one that names the config and shows
    /// the table.
    pub fn with_imported(
        &self,
        imported: &Imported,
        config: &Source,
    ) -> Result<Circuit, Diagnostics> {
        let Some(existing) = self.checkpoint(&imported.name) else {
            return self.with_table(imported, config);
        };
        // Checked under a name of its own, then compared with the one written.
        let mut renamed = imported.clone();
        renamed.name = self.unused_checkpoint_name();
        // Its id is the pinned one's: kept, the loader would refuse it as given twice (the
        // `hf` is compared apart).
        renamed.hf = None;
        let with = self.with_table(&renamed, config)?;
        let read = with.checkpoint_or_error(&renamed.name)?;
        if read.layer_kinds() == existing.layer_kinds() && read.dims() == existing.dims() {
            return Ok(self.clone());
        }
        let (differs, at) = if read.layer_kinds() == existing.layer_kinds() {
            let differing: Vec<(&String, u64, u64)> = read
                .dims()
                .iter()
                .zip(existing.dims())
                .filter(|(a, b)| a != b)
                .map(|((dim, theirs), (_, ours))| (dim, *theirs, *ours))
                .collect();
            let dims: Vec<String> = differing
                .iter()
                .map(|(dim, theirs, ours)| format!("`{dim}` {theirs}, not {ours}"))
                .collect();
            let first = differing.first().map_or("", |(dim, _, _)| dim.as_str());
            (
                format!("its dims: {}", dims.join(", ")),
                imported.dim_span(first),
            )
        } else {
            let (theirs, ours) = (read.layer_kinds(), existing.layer_kinds());
            (
                format!(
                    "its layers: {} in the config, {} in the circuit",
                    theirs.len(),
                    ours.len()
                ),
                imported.layers_span(theirs, ours),
            )
        };
        Err(Diagnostic::error(format!(
            "circuit `{}` already has a checkpoint `{}`, and the config differs in {differs}",
            self.path(),
            imported.name
        ))
        .at(config, at)
        .label("differs from the circuit's")
        .note(format!(
            "`{}` is defined at {}",
            imported.name,
            existing.origin()
        ))
        .help("name the config's checkpoint otherwise (`--name`, `ImportOptions::name`)")
        .into())
    }

    /// A checkpoint name the circuit does not have, short enough for any limit: `imported`,
    /// with as many `_` after it as it takes.
    fn unused_checkpoint_name(&self) -> String {
        let mut name = String::from("imported");
        while self.checkpoint(&name).is_some() {
            name.push('_');
        }
        name
    }

    /// The circuit loaded again with `imported`'s table appended to its text.
    fn with_table(&self, imported: &Imported, config: &Source) -> Result<Circuit, Diagnostics> {
        let Some(circuit) = self.files().first() else {
            return Err(
                Diagnostic::error("the circuit has no file to add a checkpoint to")
                    .in_file(self.path())
                    .into(),
            );
        };
        let table = imported.to_toml();
        let text = format!("{}\n{table}", circuit.text());
        // The table's first line: after the circuit's lines and the one blank line between.
        let first_line = circuit.text().matches('\n').count() + 2;
        let report = load(CircuitSource::Text {
            name: circuit.name(),
            text: &text,
            dir: Some(&self.dir),
        });
        report.circuit.map_err(|found| {
            let found: Vec<Diagnostic> = found
                .into_iter()
                .map(|d| {
                    imported.blame(
                        imported.noted(d, config),
                        circuit.name(),
                        first_line,
                        config,
                    )
                })
                .collect();
            let header = Diagnostic::error(format!(
                "the checkpoint `{}` read from `{}` does not load in circuit `{}`",
                imported.name,
                config.name(),
                self.path()
            ))
            .note(format!("the table read, appended to the circuit:\n{table}"));
            let mut all: Diagnostics = imported.summary_at(header, &found, config).into();
            all.extend(found);
            all
        })
    }

    /// The declared dims `config` gives, for the generated plan of checkpoint `like`: what a
    /// generated `Dims::try_from(&dims[..])` takes, so `AnyPlan::new(checkpoint, dims, ..)`
    /// plans a fine-tune of `like` with other dims. The config is read and checked as
    /// [`Circuit::with_config`] does, and must give `like`'s layers, kind for kind: a generated
    /// plan's layers are fixed when it is generated.
    ///
    /// # Errors
    /// Those of [`Circuit::with_config`]; no checkpoint `like`; a layer count or a layer kind
    /// other than `like`'s.
    pub fn dims_from_config(
        &self,
        like: &str,
        config: &Source,
    ) -> Result<Vec<(String, u64)>, Diagnostics> {
        let spec = self.checkpoint_or_error(like)?;
        // A name the circuit does not have: the checkpoint is only read, never kept.
        let name = self.unused_checkpoint_name();
        let options = ImportOptions {
            name: Some(&name),
            hf: None,
        };
        let imported = import(self, config, "", options)?;
        let with = self.with_imported(&imported, config)?;
        let read = with.checkpoint_or_error(&imported.name)?;
        let (theirs, ours) = (read.layer_kinds(), spec.layer_kinds());
        let at = imported.layers_span(theirs, ours);
        let differ = |what: String| -> Diagnostics {
            Diagnostic::error(format!(
                "`{}` describes {what}: the generated plan of checkpoint `{like}` cannot hold it",
                config.name()
            ))
            .at(config, at.clone())
            .label(format!("differs from `{like}`"))
            .help(format!(
                "a generated plan's layers are fixed: add the model as a checkpoint of its own \
                 (`metrale-codegen import {} {}`) and generate it, or plan it dynamically \
                 (`Circuit::with_config`)",
                self.path(),
                config.name()
            ))
            .into()
        };
        if theirs.len() != ours.len() {
            return Err(differ(format!(
                "{} layers, `{like}` has {}",
                theirs.len(),
                ours.len()
            )));
        }
        if let Some((i, (a, b))) = theirs
            .iter()
            .zip(ours)
            .enumerate()
            .find(|(_, (a, b))| a != b)
        {
            return Err(differ(format!("layer {i} as `{a}`, `{like}` has `{b}`")));
        }
        Ok(read.dims().to_vec())
    }
}
