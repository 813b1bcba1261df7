//! A command's arguments: positionals, `--flag VALUE` (or `--flag=VALUE`) options and `--flag`
//! switches, parsed by hand against a [`Spec`].
//!
//! Invariants:
//! - Every refusal is a usage message (the caller exits 2); nothing panics.
//! - `-h`/`--help` anywhere asks for help; `--` ends the options (what follows is positional);
//!   a lone `-` is a positional. An option given twice is refused, not overridden.

use metrale_circuit::diag::did_you_mean;

/// The flags a command takes.
pub struct Spec {
    /// Options that take a value (`--checkpoint`).
    pub options: &'static [&'static str],
    /// Switches without a value (`--json`).
    pub switches: &'static [&'static str],
}

/// A parsed command line.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Args {
    /// The positional arguments, in order.
    pub positional: Vec<String>,
    /// Each option given, with its value.
    pub options: Vec<(&'static str, String)>,
    /// Each switch given.
    pub switches: Vec<&'static str>,
    /// `-h` or `--help` was given.
    pub help: bool,
}

impl Args {
    /// The value of option `name`, if given.
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether switch `name` was given.
    pub fn switch(&self, name: &str) -> bool {
        self.switches.contains(&name)
    }
}

/// Parses `args` against `spec`.
///
/// # Errors
/// A usage message: an unknown flag (with the nearest one), an option without its value, a
/// value given to a switch, a flag given twice.
pub fn parse(args: &[String], spec: &Spec) -> Result<Args, String> {
    let mut parsed = Args::default();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            parsed.positional.extend(rest.by_ref().cloned());
            break;
        }
        if arg == "-h" || arg == "--help" {
            parsed.help = true;
            continue;
        }
        if !arg.starts_with('-') || arg == "-" {
            parsed.positional.push(arg.clone());
            continue;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (arg.as_str(), None),
        };
        if let Some(&name) = spec.options.iter().find(|o| **o == flag) {
            if parsed.option(name).is_some() {
                return Err(format!("`{name}` given twice"));
            }
            let value = match inline {
                Some(value) => value.to_owned(),
                None => rest
                    .next()
                    .cloned()
                    .ok_or_else(|| format!("`{name}` needs a value"))?,
            };
            parsed.options.push((name, value));
        } else if let Some(&name) = spec.switches.iter().find(|s| **s == flag) {
            if inline.is_some() {
                return Err(format!("`{name}` takes no value"));
            }
            if parsed.switch(name) {
                return Err(format!("`{name}` given twice"));
            }
            parsed.switches.push(name);
        } else {
            let known: Vec<&str> = spec.options.iter().chain(spec.switches).copied().collect();
            return Err(match did_you_mean(flag, &known) {
                Some(near) => format!("unknown flag `{flag}`; did you mean `{near}`?"),
                None => format!("unknown flag `{flag}`"),
            });
        }
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: Spec = Spec {
        options: &["--checkpoint", "--align"],
        switches: &["--json"],
    };

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn options_switches_and_positionals() {
        let args = parse(
            &strings(&[
                "c.toml",
                "--align",
                "64",
                "--json",
                "--checkpoint=tiny",
                "--",
                "--x",
            ]),
            &SPEC,
        )
        .unwrap();
        assert_eq!(args.positional, ["c.toml", "--x"]);
        assert_eq!(args.option("--align"), Some("64"));
        assert_eq!(args.option("--checkpoint"), Some("tiny"));
        assert!(args.switch("--json"));
        assert!(!args.help);
        assert!(parse(&strings(&["-h"]), &SPEC).unwrap().help);
        assert_eq!(parse(&strings(&["-"]), &SPEC).unwrap().positional, ["-"]);
    }

    #[test]
    fn refusals() {
        let err = |a: &[&str]| parse(&strings(a), &SPEC).unwrap_err();
        assert_eq!(
            err(&["--algin", "4"]),
            "unknown flag `--algin`; did you mean `--align`?"
        );
        assert_eq!(err(&["-x"]), "unknown flag `-x`");
        assert_eq!(err(&["--align"]), "`--align` needs a value");
        assert_eq!(err(&["--json=1"]), "`--json` takes no value");
        assert_eq!(err(&["--json", "--json"]), "`--json` given twice");
        assert_eq!(err(&["--align", "1", "--align=2"]), "`--align` given twice");
    }
}
