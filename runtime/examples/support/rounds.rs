//! Fair races between allocators (or any two ways of doing one job): every
//! side does the same work per round, the sides take turns (round `r`
//! starts with side `r % n`, so no side always runs first or last), a
//! warm-up round of each is not timed, and the figure of each side is its
//! median over the timed rounds. Each round's figure of every side, and the
//! first side's figure over each other's, is printed as it comes, then the
//! medians. Compare sides only within one run: the host CPU differs between
//! machines.
//!
//! `warm_pool` readies the driver's stream-ordered pool for such a race: a
//! release threshold that keeps what the pool reserved across
//! synchronizations (the default, 0, hands it back at every one, so each
//! round would start cold), and one allocation of the working set, freed.
//!
//! Shared by `trace_replay` and the device benches (`benches/gpu.rs`,
//! `tracking.rs`, `graphs.rs`, which include it by path). It lives beside
//! the examples because the published crate carries its examples and an
//! example cannot reach a file outside the package.

use gpu_aligned::backend::cuda::cudarc::driver::{result, sys, CudaStream};

/// Any error of a race, with its message.
pub type Error = Box<dyn std::error::Error>;

/// How many rounds of each side: `warmup` untimed, then `timed`.
#[derive(Clone, Copy, Debug)]
pub struct Rounds {
    pub warmup: usize,
    pub timed: usize,
}

impl Rounds {
    /// `--rounds N` (timed rounds, default `timed`) and `--warmup N`
    /// (default `warmup`) from the command line.
    pub fn from_args(warmup: usize, timed: usize) -> Rounds {
        Rounds {
            warmup: flag("--warmup").unwrap_or(warmup),
            timed: flag("--rounds").unwrap_or(timed).max(1),
        }
    }
}

/// The number after `name` on the command line (`--pairs 100000`), if any;
/// other arguments (cargo's `--bench`, a bench's own flags) are ignored.
pub fn flag(name: &str) -> Option<usize> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == name)?;
    let value = args.get(at + 1)?;
    Some(
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name} takes a number, not {value:?}")),
    )
}

/// The median of `values` (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// Runs `rounds.warmup` untimed rounds, then `rounds.timed` timed ones, of
/// every side named in `sides`, taking turns; `round(i)` runs one round of
/// side `i` and returns its figure (in `unit`, e.g. ns per operation),
/// timing itself so that each side decides what belongs in its time (a
/// pool's round ends with a synchronization). Prints the table (see
/// [`table`]) and returns each side's figure in each timed round.
pub fn race(
    title: &str,
    unit: &str,
    sides: &[&str],
    rounds: Rounds,
    mut round: impl FnMut(usize) -> Result<f64, Error>,
) -> Result<Vec<Vec<f64>>, Error> {
    let n = sides.len();
    for r in 0..rounds.warmup {
        for k in 0..n {
            round((r + k) % n)?;
        }
    }
    let mut samples = Vec::with_capacity(rounds.timed);
    for r in 0..rounds.timed {
        let mut figures = vec![f64::NAN; n];
        for k in 0..n {
            let side = (r + k) % n;
            figures[side] = round(side)?;
        }
        samples.push(figures);
    }
    let title = format!(
        "{title}: {} timed rounds after {} warm-up, sides taking turns",
        rounds.timed, rounds.warmup
    );
    table(&title, unit, sides, &samples);
    Ok(samples)
}

/// Prints `samples` (one row per round, one figure per side) with the first
/// side's figure over each other side's in every round, then each side's
/// median, the ratio of the medians and the range of the rounds' ratios;
/// returns each side's median.
pub fn table(title: &str, unit: &str, sides: &[&str], samples: &[Vec<f64>]) -> Vec<f64> {
    let width = |name: &str| name.len().max(10);
    let ratio_names: Vec<String> = sides
        .iter()
        .skip(1)
        .map(|side| format!("{}/{side}", sides[0]))
        .collect();
    println!("\n## {title} ({unit})");
    let mut header = format!("{:>7}", "round");
    for side in sides {
        header += &format!("  {side:>w$}", w = width(side));
    }
    for name in &ratio_names {
        header += &format!("  {name:>w$}", w = width(name));
    }
    println!("{header}");
    let ratios = |figures: &[f64]| -> Vec<f64> {
        figures[1..]
            .iter()
            .map(|other| figures[0] / other)
            .collect()
    };
    for (r, figures) in samples.iter().enumerate() {
        let mut line = format!("{:>7}", r + 1);
        for (side, value) in sides.iter().zip(figures) {
            line += &format!("  {value:>w$.1}", w = width(side));
        }
        for (name, ratio) in ratio_names.iter().zip(ratios(figures)) {
            line += &format!("  {:>w$}", format!("{ratio:.2}x"), w = width(name));
        }
        println!("{line}");
    }
    let medians: Vec<f64> = (0..sides.len())
        .map(|side| median(&samples.iter().map(|f| f[side]).collect::<Vec<_>>()))
        .collect();
    let mut line = format!("{:>7}", "median");
    for (side, value) in sides.iter().zip(&medians) {
        line += &format!("  {value:>w$.1}", w = width(side));
    }
    for (name, ratio) in ratio_names.iter().zip(ratios(&medians)) {
        line += &format!("  {:>w$}", format!("{ratio:.2}x"), w = width(name));
    }
    println!("{line}");
    for (k, name) in ratio_names.iter().enumerate() {
        let per_round: Vec<f64> = samples.iter().map(|f| ratios(f)[k]).collect();
        let (low, high) = per_round
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
                (l.min(x), h.max(x))
            });
        println!(
            "{name}: {:.2}x of the medians ({:.1} / {:.1} {unit}); rounds {low:.2}x-{high:.2}x",
            medians[0] / medians[k + 1],
            medians[0],
            medians[k + 1]
        );
    }
    medians
}

/// Readies the pool that `cuMemAllocAsync` on `stream` draws from (its
/// device's current pool) for a race: sets its release threshold to the
/// most, so it keeps what it reserved across synchronizations, and
/// allocates `bytes` once and frees them. Returns the pool.
pub fn warm_pool(stream: &CudaStream, bytes: usize) -> Result<sys::CUmemoryPool, Error> {
    stream.context().bind_to_thread()?;
    // SAFETY: the device is the stream's context's own.
    let pool = unsafe { result::device::get_mem_pool(stream.context().cu_device()) }?;
    let mut threshold = u64::MAX;
    // SAFETY: the attribute is a `cuuint64_t`, read from `threshold`.
    unsafe {
        result::mem_pool::set_attribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
    }?;
    if bytes > 0 {
        // SAFETY: the memory is never touched; it is freed on the same stream.
        let p = unsafe { result::malloc_async(stream.cu_stream(), bytes) }?;
        // SAFETY: `p` came from `cuMemAllocAsync` on this stream, freed once.
        unsafe { result::free_async(p, stream.cu_stream()) }?;
    }
    stream.synchronize()?;
    Ok(pool)
}
