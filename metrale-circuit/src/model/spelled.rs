//! One macro for every enum the circuit TOML, the inputs file or `plan --json` spells by name.
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - Each variant is written once, beside its spelling; `ALL`, `SPELLINGS`, `parse` and `name`
//!   are generated from that one list, so they are in declaration order by construction and
//!   cannot disagree (no table to keep in order by hand, no test needed to hold it).

/// Declares `enum $name` with one spelling per variant, and on it `ALL` and `SPELLINGS` (in
/// declaration order), `parse(&str) -> Option<Self>`, `const fn name(self) -> &'static str`
/// and `spellings()`.
macro_rules! spelled_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$variant_meta:meta])*
                $variant:ident = $spelling:literal
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $(
                $(#[$variant_meta])*
                $variant,
            )+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: [Self; [$($spelling),+].len()] = [$(Self::$variant),+];

            /// Every spelling, in declaration order (`SPELLINGS[v as usize]` is `v.name()`).
            pub const SPELLINGS: [&'static str; [$($spelling),+].len()] = [$($spelling),+];

            /// The variant spelled `s`, if any (spellings are exact: case matters).
            #[must_use]
            pub fn parse(s: &str) -> Option<Self> {
                match s {
                    $($spelling => Some(Self::$variant),)+
                    _ => None,
                }
            }

            /// Its spelling.
            #[must_use]
            pub const fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $spelling,)+
                }
            }

            /// Every spelling, for refusals ("valid ...: ...").
            #[must_use]
            pub const fn spellings() -> &'static [&'static str] {
                &Self::SPELLINGS
            }
        }
    };
}

pub(crate) use spelled_enum;

#[cfg(test)]
mod tests {
    spelled_enum! {
        /// A test enum.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Fruit {
            /// First.
            Apple = "apple",
            /// Second.
            BloodOrange = "blood_orange",
        }
    }

    #[test]
    fn every_list_follows_declaration_order() {
        assert_eq!(Fruit::ALL, [Fruit::Apple, Fruit::BloodOrange]);
        assert_eq!(Fruit::SPELLINGS, ["apple", "blood_orange"]);
        assert_eq!(Fruit::spellings(), ["apple", "blood_orange"]);
        assert_eq!(Fruit::BloodOrange.name(), "blood_orange");
        assert_eq!(Fruit::parse("blood_orange"), Some(Fruit::BloodOrange));
        assert_eq!(Fruit::parse("BloodOrange"), None);
        assert_eq!(Fruit::parse(""), None);
    }
}
