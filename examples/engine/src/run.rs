//! The run: what the engine does, in order ([`serve`]), and [`run`], the whole program from a
//! command line to a [`Report`] (with the unit shapes of the recurrent and KV states).
//!
//! The script, for `S` fitted sequences and `K` verified rows:
//! 1. format every unit of every term;
//! 2. claim slots until the pool refuses (it must give exactly `S`: never the dummy);
//! 3. prefill each sequence (its prompt: its capacity, less what the later steps append);
//! 4. decode `ring depth + 1` steps over the batch (so each ring wraps), padding the dummy;
//! 5. take a prefix snapshot of the first sequence;
//! 6. `K + 1` rounds of verifies, sequence `i` accepting `(round + i) mod (K + 1)` rows, so
//!    every sequence rolls back to its checkpoint once and to each row once;
//! 7. release the first sequence, claim its slot again for a new one and restore the snapshot
//!    into it;
//! 8. release everything, then read every unit back.
//!
//! Invariants: the last write of each live state is a rollback or a restore, so the final
//! check proves those copies landed where the plan says.

use metrale_circuit::Space;

use crate::engine::Engine;
use crate::layout::{Group, View};
use crate::report::{Report, UnitShape, WindowSide};
use crate::{Args, EngineError, Layout, Setup};

/// Prepares what `args` name and serves it ([`Setup::prepare`], [`serve`]).
///
/// # Errors
/// Those of [`Setup::prepare`], [`Layout::new`] and [`serve`]. Broken tags are not an error:
/// they are in the report ([`Report::intact`]).
pub fn run(args: &Args) -> Result<Report, EngineError> {
    let setup = Setup::prepare(args)?;
    let layout = Layout::new(&setup.plan, &setup.decls, h_steps(&setup))?;
    serve(&setup, layout)
}

/// The verify inputs' rows per slot of `setup`'s plan.
#[must_use]
pub fn h_steps(setup: &Setup) -> Option<metrale_circuit::inputs::HSteps<'static>> {
    setup.counts.verify.map(|verify| verify.h_steps)
}

/// Runs the script over `layout` (the plan of `setup`, or a copy altered to inject a fault).
///
/// # Errors
/// Any operation's error ([`Engine`]); broken tags are in the report.
pub fn serve(setup: &Setup, layout: Layout) -> Result<Report, EngineError> {
    let mut engine = Engine::new(setup, layout)?;
    engine.format()?;
    let mut batch = Vec::new();
    while let Some(slot) = engine.claim()? {
        batch.push(slot);
    }
    if batch.len() as u64 != setup.sequences() {
        return Err(EngineError::Invariant(format!(
            "the slot pool gave {} slots for {} sequences",
            batch.len(),
            setup.sequences()
        )));
    }
    let k = setup.profile.verify_rows;
    let decode_steps = setup.profile.ring_depth + 1;
    // What the decode steps and the verifies append after the prompt (verify rounds accept
    // 0 + 1 + ... + K rows in all).
    let later = decode_steps.saturating_add(k.saturating_mul(k.saturating_add(1)) / 2);
    let prompt = engine.capacity().saturating_sub(later);
    for &slot in &batch {
        engine.prefill(slot, prompt)?;
    }
    for _ in 0..decode_steps {
        engine.decode(&batch)?;
    }
    let snapshot = match batch.first() {
        Some(&slot) => engine.snapshot_prefix(slot)?,
        None => None,
    };
    if k > 0 {
        for round in 0..=k {
            for (i, &slot) in (0_u64..).zip(&batch) {
                engine.verify(slot, (round + i) % (k + 1))?;
            }
        }
    }
    if let (Some(snapshot), Some(first)) = (snapshot, batch.first_mut()) {
        engine.release(*first)?;
        let slot = engine.claim()?.ok_or_else(|| {
            EngineError::Pool("no slot for the restored sequence after a release".to_owned())
        })?;
        engine.restore_prefix(&snapshot, slot)?;
        engine.release_prefix(&snapshot)?;
        *first = slot;
    }
    for &slot in &batch {
        engine.release(slot)?;
    }
    let layout = engine.layout();
    let (terms, align) = (layout.term_count(), layout.align());
    let (device_bytes, host_bytes) = (
        layout.arena_bytes(Space::Device),
        layout.arena_bytes(Space::Host),
    );
    let capacity = engine.capacity();
    let shapes = unit_shapes(layout);
    let shaped_terms = engine
        .views()
        .iter()
        .filter(|view| matches!(view, View::Elements(_)))
        .count();
    let sides = engine.kv_sides().len();
    let windows = engine
        .kv_sides()
        .iter()
        .filter_map(|side| {
            side.ring().map(|ring| WindowSide {
                state: layout.states()[side.state].id.clone(),
                window: ring.window,
                per_sequence: ring.per_sequence,
                most_held: side.most_held,
            })
        })
        .collect();
    let finish = engine.finish()?;
    Ok(Report {
        circuit: setup.circuit.clone(),
        checkpoint: setup.checkpoint.clone(),
        source: setup.source.clone(),
        budget: setup.budget,
        context: setup.context,
        fit: setup.fit,
        costs: setup.costs,
        slots: setup.counts.slots,
        verify_rows: k,
        terms,
        kv_sides: sides,
        windows,
        capacity,
        shapes,
        shaped_terms,
        align,
        device_bytes,
        host_bytes,
        operations: finish.operations,
        tags: finish.tags,
    })
}

/// The unit shape of each recurrent and KV state of `layout`, each distinct one once.
fn unit_shapes(layout: &Layout) -> Vec<UnitShape> {
    let mut shapes: Vec<UnitShape> = Vec::new();
    for state in layout.states() {
        let (Group::Recurrent { live: term, .. } | Group::Kv { term, .. }) = state.group else {
            continue;
        };
        let shape = UnitShape {
            state: state.local.clone(),
            extents: state.shape.extents.clone(),
            dtype: layout.region(term).dtype,
        };
        if !shape.extents.is_empty() && !shapes.contains(&shape) {
            shapes.push(shape);
        }
    }
    shapes
}
