//! What a GPU leaves the state ([`GpuMemory`]): its memory, the share a server may use
//! ([`Utilization`], vLLM's `gpu_memory_utilization`), less the weights and a fixed reserve for
//! activations, CUDA graphs and workspace. Its [`GpuMemory::state_budget`] is the budget every
//! fit (dynamic, generated, the CLI's) takes, so "how many requests fit on this GPU" is one call.
//!
//! Owner: metrale-circuit (runtime).
//! Invariants:
//! - All arithmetic is integer and checked: the share is parts per million, the usable bytes
//!   `floor(total x ppm / 1,000,000)`, computed in `u128` (no overflow for any `u64` total).
//! - What the weights and the reserve do not leave is an error ([`GpuShortfall`]), never a
//!   zero budget.

/// The share of a GPU's memory a server may use, in parts per million: vLLM's
/// `gpu_memory_utilization` (`0.92` is 920,000 ppm, vLLM 0.33.0's default,
/// `vllm/config/cache.py:215` at commit 4ba787ec9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Utilization {
    ppm: u32,
}

impl Utilization {
    /// The whole GPU.
    pub const FULL: Utilization = Utilization { ppm: 1_000_000 };

    /// vLLM 0.33.0's default, 0.92.
    pub const VLLM_DEFAULT: Utilization = Utilization { ppm: 920_000 };

    /// `ppm` parts per million; `None` unless `1..=1_000_000`.
    #[must_use]
    pub const fn from_ppm(ppm: u32) -> Option<Utilization> {
        if ppm == 0 || ppm > 1_000_000 {
            None
        } else {
            Some(Utilization { ppm })
        }
    }

    /// Its parts per million.
    #[must_use]
    pub const fn ppm(self) -> u32 {
        self.ppm
    }

    /// Reads a fraction as vLLM's flag writes it: `0.92`, `1`, `.5`, at most six decimals, more
    /// than 0 and at most 1.
    ///
    /// # Errors
    /// What would be valid, for anything else.
    pub fn parse(text: &str) -> Result<Utilization, String> {
        let refuse = || {
            format!(
                "`{text}` is not a share of the GPU: give a fraction above 0 and at most 1, with \
                 at most six decimals (vLLM's `gpu_memory_utilization`, e.g. 0.92)"
            )
        };
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (whole.is_empty() && fraction.is_empty())
            || !digits(whole)
            || !digits(fraction)
            || fraction.len() > 6
            || whole.len() > 1
        {
            return Err(refuse());
        }
        let whole: u32 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| refuse())?
        };
        let mut ppm = whole.checked_mul(1_000_000).ok_or_else(refuse)?;
        let mut scale = 100_000;
        for digit in fraction.bytes() {
            ppm += u32::from(digit - b'0') * scale;
            scale /= 10;
        }
        Utilization::from_ppm(ppm).ok_or_else(refuse)
    }
}

impl std::fmt::Display for Utilization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (whole, fraction) = (self.ppm / 1_000_000, self.ppm % 1_000_000);
        if fraction == 0 {
            return write!(f, "{whole}");
        }
        let digits = format!("{fraction:06}");
        write!(f, "{whole}.{}", digits.trim_end_matches('0'))
    }
}

/// A GPU and what it holds besides the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GpuMemory {
    /// The GPU's memory, bytes.
    pub total: u64,
    /// The share of it the server may use.
    pub utilization: Utilization,
    /// The weights this GPU holds, bytes.
    pub weights: u64,
    /// A fixed reserve for activations, CUDA graphs and workspace, bytes.
    pub reserve: u64,
}

/// The weights and the reserve take more than the GPU's usable share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GpuShortfall {
    /// The usable bytes (`total x utilization`).
    pub usable: u64,
    /// The weights and the reserve together (saturating at `u64::MAX`).
    pub taken: u64,
}

impl std::fmt::Display for GpuShortfall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the weights and the reserve take {} bytes, more than the {} usable bytes of the GPU",
            self.taken, self.usable
        )
    }
}

impl std::error::Error for GpuShortfall {}

impl GpuMemory {
    /// One of `gpus` GPUs serving a checkpoint whose weights are `weights` bytes in all, split
    /// evenly over them (`tp x pp`; each holds `ceil(weights / gpus)`, at least one GPU).
    #[must_use]
    pub const fn sharded(
        total: u64,
        utilization: Utilization,
        weights: u64,
        gpus: u64,
        reserve: u64,
    ) -> GpuMemory {
        let gpus = if gpus == 0 { 1 } else { gpus };
        GpuMemory {
            total,
            utilization,
            weights: weights.div_ceil(gpus),
            reserve,
        }
    }

    /// The bytes the server may use: `floor(total x utilization)`.
    #[must_use]
    pub const fn usable(&self) -> u64 {
        let bytes = self.total as u128 * self.utilization.ppm as u128 / 1_000_000;
        // At most `total`: the share is at most 1, so it fits `u64`.
        #[allow(
            clippy::cast_possible_truncation,
            reason = "at most `total`, a u64: the share is at most 1"
        )]
        let bytes = bytes as u64;
        bytes
    }

    /// The bytes the state may take: the usable bytes less the weights and the reserve. The
    /// budget of `fit_kv_blocks`, `fit_sequences` and the other fits.
    ///
    /// # Errors
    /// [`GpuShortfall`] when the weights and the reserve take more than the usable bytes.
    pub const fn state_budget(&self) -> Result<u64, GpuShortfall> {
        let usable = self.usable();
        // Weights and a reserve past `u64::MAX` together exceed any GPU.
        let Some(taken) = self.weights.checked_add(self.reserve) else {
            return Err(GpuShortfall {
                usable,
                taken: u64::MAX,
            });
        };
        match usable.checked_sub(taken) {
            Some(budget) => Ok(budget),
            None => Err(GpuShortfall { usable, taken }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn weights_split_over_gpus_round_up() {
        // 54 GiB over 4 GPUs is 13.5 GiB each; 10 B over 4 is 3 B each (ceil 2.5); 0 GPUs is 1.
        let share = |weights, gpus| {
            GpuMemory::sharded(80 * GIB, Utilization::VLLM_DEFAULT, weights, gpus, 0).weights
        };
        assert_eq!(share(54 * GIB, 4), 54 * GIB / 4);
        assert_eq!(share(10, 4), 3);
        assert_eq!(share(10, 0), 10);
    }

    #[test]
    fn a_24_gib_gpu_with_17_gib_of_weights_by_hand() {
        // 24 GiB = 25,769,803,776 B; x 0.92 = 23,708,219,473.92 -> 23,708,219,473 B; less 17 GiB
        // and 1 GiB.
        let gpu = GpuMemory {
            total: 24 * GIB,
            utilization: Utilization::VLLM_DEFAULT,
            weights: 17 * GIB,
            reserve: GIB,
        };
        assert_eq!(gpu.usable(), 23_708_219_473);
        assert_eq!(gpu.state_budget(), Ok(23_708_219_473 - 18 * GIB));
        let full = GpuMemory {
            utilization: Utilization::FULL,
            ..gpu
        };
        assert_eq!(full.state_budget(), Ok(6 * GIB));
        let short = GpuMemory {
            weights: 24 * GIB,
            ..gpu
        };
        assert_eq!(
            short.state_budget(),
            Err(GpuShortfall {
                usable: 23_708_219_473,
                taken: 25 * GIB
            })
        );
        let huge = GpuMemory {
            total: u64::MAX,
            utilization: Utilization::FULL,
            weights: u64::MAX,
            reserve: 1,
        };
        assert_eq!(huge.usable(), u64::MAX);
        assert!(huge.state_budget().is_err());
    }

    #[test]
    fn shares_parse_as_vllm_writes_them() {
        let ppm = |s: &str| Utilization::parse(s).map(Utilization::ppm);
        assert_eq!(ppm("0.92"), Ok(920_000));
        assert_eq!(ppm("1"), Ok(1_000_000));
        assert_eq!(ppm("1.0"), Ok(1_000_000));
        assert_eq!(ppm(".5"), Ok(500_000));
        assert_eq!(ppm("0.000001"), Ok(1));
        for bad in [
            "0",
            "0.0",
            "1.5",
            "2",
            "0.0000001",
            "",
            ".",
            "-0.5",
            "0,9",
            "1e-1",
            "10",
        ] {
            assert!(Utilization::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Utilization::VLLM_DEFAULT.to_string(), "0.92");
        assert_eq!(Utilization::FULL.to_string(), "1");
        assert_eq!(
            Utilization::from_ppm(1).map(|u| u.to_string()),
            Some("0.000001".into())
        );
    }
}
