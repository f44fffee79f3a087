//! The αβ algorithm's random steps over tuple codes.
//!
//! # Citations
//! * Rastogi, Suciu, Hong. *The Boundary Between Privacy and Utility in Data
//!   Publishing*, VLDB 2007: Algorithm 1 (α-step, β-step), Algorithm 7
//!   (multiple views reuse both steps with other probabilities).
//!
//! Codes are handled as u128 inside (m ≤ 2^128); the output is written as
//! `limbs` u64 words per code (1 when m ≤ 2^64, else 2, most significant
//! first), matching `encode.rs`.

use crate::error::{check_radices, KernelError};
use crate::rng::{fill_uniform, segment_rng, Key};
use rand::{Rng, RngCore};
use rand_chacha::ChaCha12Rng;
use rand_distr::Exp1;
use rayon::prelude::*;

/// Expected selections per β-step segment. Fixed: it defines which stream
/// draws which ranks, so changing it changes every seeded result.
const SEGMENT_TARGET: f64 = 65536.0;

/// Segments drawn together (one contiguous run per thread) before the runs
/// are joined in the output: a window is about 32 MiB of codes, of which the
/// runs after the first (16 MiB on two threads) are held besides the output. Not a property of the result:
/// any window and any number of runs give the same codes.
const WINDOW: usize = 64;

/// Keep each record of a *sorted* code list independently: the first copy of
/// a code with probability `p_first[i]` (one value for all, or one per
/// record), each further copy with `p_rest`. Record i uses element i of the
/// uniform stream of `key`, counted from `start` (a slice of a larger
/// sorted list, such as a Dask partition, passes its first record's position
/// and draws what the whole list would).
///
/// With p_first = α+β and p_rest = α a tuple with c records contributes
/// cα + β copies in expectation, so (n_V − β n_D)/α stays unbiased for record
/// counts (docs/design.md, "Real tables repeat records").
pub fn keep_records<T: PartialEq + Sync>(
    key: &Key,
    start: u64,
    sorted: &[T],
    p_first: &[f64],
    p_rest: f64,
) -> Result<Vec<bool>, KernelError> {
    if p_first.len() != 1 && p_first.len() != sorted.len() {
        return Err(KernelError::Shape(format!(
            "{} first-copy probabilities for {} records",
            p_first.len(),
            sorted.len()
        )));
    }
    let mut u = vec![0.0; sorted.len()];
    fill_uniform(key, start, &mut u);
    Ok(u.par_iter()
        .enumerate()
        .map(|(i, &x)| {
            let first = i == 0 || sorted[i] != sorted[i - 1];
            x < if first {
                p_first[if p_first.len() == 1 { 0 } else { i }]
            } else {
                p_rest
            }
        })
        .collect())
}

/// Thinning for a product-form insertion probability (Algorithm 8): keep
/// candidate code c with probability Π_j ratio_j[digit_j(c)], where the
/// digits are the mixed-radix digits of c (first attribute most significant)
/// and `ratios` holds each attribute's table back to back. Candidate i uses
/// element `start + i` of the uniform stream of `key` (a streamed write
/// thins window after window, passing the candidates drawn before).
pub fn thin_product(
    key: &Key,
    start: u64,
    codes: &[u128],
    radices: &[u64],
    ratios: &[f64],
) -> Result<Vec<bool>, KernelError> {
    check_radices(radices)?;
    let values = radices
        .iter()
        .try_fold(0u64, |acc, &r| acc.checked_add(r))
        .ok_or_else(|| KernelError::Capacity("the radices sum past 2^64".into()))?;
    if ratios.len() as u64 != values {
        return Err(KernelError::Shape(format!(
            "{} ratios for radices summing to {values}; one ratio per domain value",
            ratios.len()
        )));
    }
    // m = Π radices; past 2^128 every u128 code is below it.
    let m = radices
        .iter()
        .try_fold(1u128, |acc, &r| acc.checked_mul(u128::from(r)));
    if let Some(m) = m {
        // A parallel maximum first; the row is searched only on failure.
        if codes.par_iter().max().is_some_and(|&c| c >= m) {
            let row = codes.iter().position(|&c| c >= m).unwrap_or(0);
            return Err(KernelError::InvalidCode { row });
        }
    }
    let mut starts = Vec::with_capacity(radices.len());
    let mut at = 0usize;
    for &r in radices {
        starts.push(at);
        at += r as usize;
    }
    let mut u = vec![0.0; codes.len()];
    fill_uniform(key, start, &mut u);
    Ok(codes
        .par_iter()
        .zip(u.par_iter())
        .map(|(&code, &x)| {
            let mut rest = code;
            let mut p = 1.0;
            for (j, &r) in radices.iter().enumerate().rev() {
                p *= ratios[starts[j] + (rest % u128::from(r)) as usize];
                rest /= u128::from(r);
            }
            x < p
        })
        .collect())
}

/// A geometric number of failures before a success with probability β,
/// where `inv_rate` = −1 / ln(1 − β) > 0: if E ~ Exp(1) then ⌊E / −ln(1 − β)⌋
/// is geometric. E comes from the ziggurat sampler (exact, and cheaper than
/// inverting a logarithm). When the result exceeds 2^52 its bits below the
/// double's precision are filled uniformly, which is the geometric law to
/// within a relative 2^-52 (it is flat at that scale).
#[inline]
fn geometric(rng: &mut ChaCha12Rng, inv_rate: f64) -> u128 {
    let e: f64 = rng.sample(Exp1);
    let g = e * inv_rate;
    if g < (1u64 << 52) as f64 {
        // The common case, converted by one instruction (`as` saturates,
        // and a u128's conversion calls a routine).
        // SAFETY: 0 ≤ g < 2^52 (E ≥ 0, inv_rate ≥ 0; NaN fails the test), so it fits an i64.
        return u128::from(unsafe { g.to_int_unchecked::<i64>() } as u64);
    }
    wide_geometric(rng, g)
}

/// [`geometric`] past 2^52 (only for β below about 10^-13).
#[cold]
fn wide_geometric(rng: &mut ChaCha12Rng, g: f64) -> u128 {
    if g >= 2f64.powi(126) {
        return 1u128 << 126; // beyond every supported domain
    }
    let low_bits = (g.log2().floor() as u32).saturating_sub(52);
    let high = (g as u128) >> low_bits << low_bits;
    let random =
        (u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())) & ((1u128 << low_bits) - 1);
    high | random
}

/// The β-step: every code in [0, m) that is not in `excluded` is selected
/// independently with probability `beta`.
///
/// Exact simulation in expected O(β·m + |excluded|) time, never O(m): code
/// space is cut into fixed segments of `seg_len` ≈ `SEGMENT_TARGET / β`
/// codes; segment s draws the geometric gaps between its selected codes from
/// stream s (memorylessness makes segments independent), and a selected code
/// that is excluded is dropped. Dropping rather than skipping the excluded
/// codes (each code in I costs β of a draw) makes a segment's output depend on
/// its own codes only, so any set of segments can be drawn on its own — by a
/// window of a streamed write or by a Dask task holding that range of I —
/// and the union is the same codes, byte for byte.
pub struct BetaStep {
    key: Key,
    inv_rate: f64,
    /// Sorted distinct excluded codes (only those inside the segments drawn matter).
    excluded: Vec<u128>,
    m: u128,
    beta: f64,
    seg_len: u128,
    segments: u64,
}

/// The segment length for `beta` and the number of segments covering [0, m).
pub fn segment_layout(m: u128, beta: f64) -> Result<(u128, u64), KernelError> {
    if !(0.0..=1.0).contains(&beta) {
        return Err(KernelError::Parameter(format!(
            "beta = {beta} is not a probability"
        )));
    }
    if beta == 0.0 {
        return Ok((m.max(1), 0));
    }
    let seg_len = ((SEGMENT_TARGET / beta).ceil().min(2f64.powi(120)) as u128).max(1);
    let segments = u64::try_from(m.div_ceil(seg_len))
        .map_err(|_| KernelError::Capacity("too many β-step segments".into()))?;
    Ok((seg_len, segments))
}

impl BetaStep {
    pub fn new(key: &Key, m: u128, beta: f64, excluded: &[u128]) -> Result<Self, KernelError> {
        let (seg_len, segments) = segment_layout(m, beta)?;
        if excluded.windows(2).any(|w| w[0] >= w[1]) || excluded.last().is_some_and(|&c| c >= m) {
            return Err(KernelError::Parameter(
                "excluded codes must be sorted, distinct and below m".into(),
            ));
        }
        Ok(BetaStep {
            key: *key,
            inv_rate: -1.0 / (-beta).ln_1p(),
            excluded: excluded.to_vec(),
            m,
            beta,
            seg_len,
            segments,
        })
    }

    /// Write the selected codes of segment `s` to `dst` in increasing order,
    /// each preceded by the codes of `kept[*k..]` below it (advancing `*k`).
    ///
    /// Between two excluded codes nothing needs checking: the inner loop only
    /// draws and writes up to the next one (every kept code is excluded, so
    /// none falls inside such a stretch), and the checks run once per
    /// excluded code crossed rather than once per selected code.
    fn segment<const LIMBS: usize>(
        &self,
        s: u64,
        dst: &mut Vec<u64>,
        kept: &[u128],
        k: &mut usize,
    ) {
        let start = u128::from(s) * self.seg_len;
        // The last segment may end past u128::MAX when m is near 2^128.
        let end = start.saturating_add(self.seg_len).min(self.m);
        let mut rng = segment_rng(&self.key, s);
        let inv_rate = self.inv_rate;
        let mut code = start.saturating_add(geometric(&mut rng, inv_rate));
        let mut next = |code: u128| {
            code.saturating_add(geometric(&mut rng, inv_rate) + 1) // a gap is at most 2^126
        };
        let mut j = self.excluded.partition_point(|&c| c < code);
        loop {
            // The kept records below `code` go first (those before the first
            // code, or those `code` has just passed).
            while *k < kept.len() && kept[*k] < code.min(end) {
                push_code::<LIMBS>(dst, kept[*k]);
                *k += 1;
            }
            if code >= end {
                break;
            }
            let barrier = self.excluded.get(j).map_or(end, |&c| c.min(end));
            while code < barrier {
                push_code::<LIMBS>(dst, code);
                code = next(code);
            }
            // code ≥ excluded[j] (or ≥ end): dropped if it is excluded.
            while j < self.excluded.len() && self.excluded[j] < code {
                j += 1;
            }
            if self.excluded.get(j) == Some(&code) {
                code = next(code);
            }
        }
    }

    /// Selected codes, sorted, as `limbs` u64 words each (most significant
    /// first). One generation pass: the segments of a window are cut into one
    /// contiguous run per thread; the first run is drawn straight into the
    /// output (reserved for the expected count plus 8 standard deviations), the
    /// others into reused buffers that are then appended in parallel. Peak
    /// memory is the output and those buffers (about a window's share).
    pub fn run(&self, limbs: usize) -> Result<Vec<u64>, KernelError> {
        self.run_segments(limbs, 0, self.segments)
    }

    /// The selected codes of segments `first .. stop` (clipped to the
    /// segments that exist): those in [first·seg_len, stop·seg_len).
    pub fn run_segments(
        &self,
        limbs: usize,
        first: u64,
        stop: u64,
    ) -> Result<Vec<u64>, KernelError> {
        self.run_segments_with(limbs, first, stop, &[])
    }

    /// As [`BetaStep::run_segments`], with the sorted codes `kept` (repeats
    /// allowed; each must be excluded, so none equals a selected code, and lie
    /// in the segments' range) written in order among the selected ones: the
    /// α-step's records join the noise as it is drawn, with no second pass
    /// over the output to merge them.
    pub fn run_segments_with(
        &self,
        limbs: usize,
        first: u64,
        stop: u64,
        kept: &[u128],
    ) -> Result<Vec<u64>, KernelError> {
        let stop = stop.min(self.segments);
        let first = first.min(stop);
        let (lo, hi) = (self.code_at(first), self.code_at(stop));
        let in_range = |c: &u128| (lo..hi).contains(c) || (first == stop && *c < self.m);
        if kept.windows(2).any(|w| w[0] > w[1])
            || !kept.iter().all(in_range)
            || !kept.iter().all(|c| self.excluded.binary_search(c).is_ok())
        {
            return Err(KernelError::Parameter(
                "kept codes must be sorted, excluded codes, inside the segments drawn".into(),
            ));
        }
        self.run_windowed(
            limbs,
            first,
            stop,
            kept,
            WINDOW,
            rayon::current_num_threads(),
        )
    }

    /// The first code of segment `s` (m past the last segment).
    fn code_at(&self, s: u64) -> u128 {
        if s >= self.segments {
            self.m
        } else {
            u128::from(s).saturating_mul(self.seg_len).min(self.m)
        }
    }

    fn run_windowed(
        &self,
        limbs: usize,
        first: u64,
        stop: u64,
        kept: &[u128],
        window: usize,
        runs: usize,
    ) -> Result<Vec<u64>, KernelError> {
        if !(limbs == 1 || limbs == 2) || (limbs == 1 && self.m > 1u128 << 64) {
            return Err(KernelError::Shape(format!(
                "{limbs} limbs cannot hold these codes"
            )));
        }
        if first == stop {
            return Ok(from_u128(kept, limbs)); // no segment to draw (β = 0)
        }
        // Refuse an output no memory can hold before drawing it (≈ β · its codes).
        let span = u128::from(stop - first)
            .saturating_mul(self.seg_len)
            .min(self.m) as f64;
        let expected = span * self.beta;
        if expected * (8 * limbs) as f64 > isize::MAX as f64 {
            return Err(KernelError::Capacity(format!(
                "the β-step would select about {expected:.3e} codes, more than memory can hold"
            )));
        }
        // Exceeded with probability below 1e-15; the output then simply grows.
        let reserve = ((expected + 8.0 * expected.sqrt() + 64.0) as usize + kept.len()) * limbs;
        let mut out = Vec::new();
        out.try_reserve_exact(reserve).map_err(|_| {
            KernelError::Capacity(format!("cannot allocate {reserve} words of β-step codes"))
        })?;
        advise_huge_pages(&mut out);
        let runs = runs.max(1);
        let mut bufs: Vec<Vec<u64>> = vec![Vec::new(); runs - 1];
        let mut first = first;
        while first < stop {
            let count = (stop - first).min(window as u64);
            // Run r draws segments [first + r·count/runs, first + (r+1)·count/runs).
            let bounds = |r: usize| first + count * r as u64 / runs as u64;
            bufs.iter_mut().for_each(Vec::clear);
            let mut targets: Vec<&mut Vec<u64>> = Vec::with_capacity(runs);
            targets.push(&mut out);
            targets.extend(bufs.iter_mut());
            targets.into_par_iter().enumerate().for_each(|(r, dst)| {
                let (lo, hi) = (self.code_at(bounds(r)), self.code_at(bounds(r + 1)));
                let ours =
                    &kept[kept.partition_point(|&c| c < lo)..kept.partition_point(|&c| c < hi)];
                let mut k = 0;
                for s in bounds(r)..bounds(r + 1) {
                    if limbs == 1 {
                        self.segment::<1>(s, dst, ours, &mut k);
                    } else {
                        self.segment::<2>(s, dst, ours, &mut k);
                    }
                }
                dst.extend(from_u128(&ours[k..], limbs));
            });
            append_parallel(&mut out, &bufs)?;
            first += count;
        }
        Ok(out)
    }
}

/// Words copied by one task when appending (the output's fresh pages are
/// faulted in by whoever writes them first: spread that over the threads).
const COPY_CHUNK: usize = 1 << 17;

/// Append `pieces` to `out` in order, copied in chunks by parallel tasks.
fn append_parallel(out: &mut Vec<u64>, pieces: &[Vec<u64>]) -> Result<(), KernelError> {
    let total: usize = pieces.iter().map(Vec::len).sum();
    out.try_reserve(total)
        .map_err(|_| KernelError::Capacity("more β-step codes than fit in memory".into()))?;
    let start = out.len();
    let mut rest = &mut out.spare_capacity_mut()[..total];
    let mut jobs = Vec::new();
    for src in pieces.iter().flat_map(|p| p.chunks(COPY_CHUNK)) {
        let (dst, tail) = rest.split_at_mut(src.len());
        jobs.push((dst, src));
        rest = tail;
    }
    jobs.into_par_iter().for_each(|(dst, src)| {
        for (d, &s) in dst.iter_mut().zip(src) {
            d.write(s);
        }
    });
    // SAFETY: the `total` words after `start` were each written just above.
    unsafe { out.set_len(start + total) };
    Ok(())
}

/// Ask the kernel to back `v`'s spare capacity with huge pages: faulting in
/// an output of 10^8 codes 4 KiB at a time was a third of the β-step's time.
fn advise_huge_pages(v: &mut Vec<u64>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let spare = v.spare_capacity_mut();
        let start = spare.as_mut_ptr() as usize;
        let end = start + std::mem::size_of_val(spare);
        let (lo, hi) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if lo < hi {
            // SAFETY: [lo, hi) lies inside `v`'s allocation, which we own;
            // MADV_HUGEPAGE changes how pages are backed, never their contents.
            unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE) };
        }
    }
}

#[inline]
fn push_code<const LIMBS: usize>(out: &mut Vec<u64>, code: u128) {
    if LIMBS == 1 {
        out.push(code as u64);
    } else {
        out.extend_from_slice(&[(code >> 64) as u64, code as u64]);
    }
}

/// Codes given as `limbs` (1 or 2) u64 words each, as u128.
pub fn to_u128(words: &[u64], limbs: usize) -> Result<Vec<u128>, KernelError> {
    match limbs {
        1 => Ok(words.iter().map(|&w| u128::from(w)).collect()),
        2 if words.len() % 2 != 0 => Err(KernelError::Shape(format!(
            "{} words are not whole codes of 2 limbs",
            words.len()
        ))),
        2 => Ok(words
            .chunks_exact(2)
            .map(|w| u128::from(w[0]) << 64 | u128::from(w[1]))
            .collect()),
        _ => Err(KernelError::Capacity(format!(
            "{limbs} limbs: the αβ kernels support m ≤ 2^128"
        ))),
    }
}

/// Codes as `limbs` (1 or 2) u64 words each, most significant first.
pub fn from_u128(codes: &[u128], limbs: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(codes.len() * limbs);
    for &c in codes {
        if limbs == 1 {
            push_code::<1>(&mut out, c);
        } else {
            push_code::<2>(&mut out, c);
        }
    }
    out
}

/// Merge two sorted code lists (each `limbs` words per code) into one sorted list.
///
/// Each row of the shorter list is placed by a galloping search in the longer
/// one, and the rows between are copied as one run: a few records merged into
/// 10^8 noise codes cost a few memory copies, not a comparison per row, and
/// lists of equal length still merge in linear time.
pub fn merge_sorted(a: &[u64], b: &[u64], limbs: usize) -> Result<Vec<u64>, KernelError> {
    if limbs == 0 || a.len() % limbs != 0 || b.len() % limbs != 0 {
        return Err(KernelError::Shape(format!(
            "{} and {} words are not whole codes of {limbs} limbs",
            a.len(),
            b.len()
        )));
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let rows = long.len() / limbs;
    let row = |i: usize| &long[i * limbs..(i + 1) * limbs];
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut at = 0; // rows of `long` already copied
    for code in short.chunks_exact(limbs) {
        // Gallop: the first row ≥ code lies in (at + step/2, at + step].
        let mut step = 1;
        while at + step <= rows && row(at + step - 1) < code {
            step *= 2;
        }
        let (mut lo, mut hi) = (at + step / 2, (at + step).min(rows));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if row(mid) < code {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        out.extend_from_slice(&long[at * limbs..lo * limbs]);
        out.extend_from_slice(code);
        at = lo;
    }
    out.extend_from_slice(&long[at * limbs..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beta_codes(seed: u8, m: u128, beta: f64, excluded: &[u128]) -> Vec<u64> {
        BetaStep::new(&[seed; 32], m, beta, excluded)
            .unwrap()
            .run(1)
            .unwrap()
    }

    /// The β-step as the definition reads, one check per drawn code: the
    /// same draws from the same streams, so every seeded release is unchanged
    /// by the stretches between excluded codes.
    fn reference_codes(key: &Key, m: u128, beta: f64, excluded: &[u128]) -> Vec<u64> {
        let (seg_len, segments) = segment_layout(m, beta).unwrap();
        let inv_rate = -1.0 / (-beta).ln_1p();
        let mut out = Vec::new();
        for s in 0..segments {
            let (start, end) = (
                u128::from(s) * seg_len,
                (u128::from(s + 1) * seg_len).min(m),
            );
            let mut rng = segment_rng(key, s);
            let mut code = start + geometric(&mut rng, inv_rate);
            while code < end {
                if excluded.binary_search(&code).is_err() {
                    out.push(code as u64);
                }
                code += 1 + geometric(&mut rng, inv_rate);
            }
        }
        out
    }

    #[test]
    fn stretches_between_excluded_codes_draw_what_the_definition_draws() {
        // Excluded codes alone, in runs, at segment edges and dense enough
        // that many selected codes land on them; β high and low.
        let mut excluded: Vec<u128> = (0..3000).map(|i| i * 11 + 5).collect();
        excluded.extend(40_000..40_200);
        excluded.extend([0, 1, 65_535, 65_536, 65_537, 199_999]);
        excluded.sort_unstable();
        excluded.dedup();
        for (seed, beta) in [(1u8, 0.5), (2, 0.9), (3, 0.05), (4, 1.0)] {
            let key = [seed; 32];
            let ours = BetaStep::new(&key, 200_000, beta, &excluded)
                .unwrap()
                .run(1)
                .unwrap();
            assert_eq!(
                ours,
                reference_codes(&key, 200_000, beta, &excluded),
                "β = {beta}"
            );
        }
    }

    #[test]
    fn beta_step_output_is_sorted_distinct_and_avoids_excluded() {
        let excluded: Vec<u128> = (0..1000).map(|i| i * 7 + 3).collect();
        let codes = beta_codes(1, 100_000, 0.05, &excluded);
        assert!(codes.windows(2).all(|w| w[0] < w[1]));
        assert!(codes
            .iter()
            .all(|&c| c < 100_000 && (c < 3 || (c - 3) % 7 != 0 || c > 6996)));
        // Mean 0.05 · 99,000 = 4,950, sd ≈ 68.6: allow 5 sd.
        assert!(
            (codes.len() as f64 - 4950.0).abs() < 5.0 * 68.6,
            "{}",
            codes.len()
        );
    }

    #[test]
    fn every_free_code_has_frequency_beta() {
        // m = 40 with 10 excluded codes; 20,000 seeds; each free code should be
        // selected with probability 0.3 (sd of the frequency ≈ 0.0032).
        let excluded: Vec<u128> = (0..10).map(|i| i * 4).collect();
        let mut hits = [0u32; 40];
        let trials = 20_000;
        for t in 0..trials {
            let mut key = [0u8; 32];
            key[..4].copy_from_slice(&(t as u32).to_le_bytes());
            for c in BetaStep::new(&key, 40, 0.3, &excluded)
                .unwrap()
                .run(1)
                .unwrap()
            {
                hits[c as usize] += 1;
            }
        }
        for (c, &h) in hits.iter().enumerate() {
            let f = f64::from(h) / f64::from(trials);
            if c % 4 == 0 && c < 40 {
                assert_eq!(h, 0, "excluded code {c} was selected");
            } else {
                assert!((f - 0.3).abs() < 5.0 * 0.00324, "code {c}: {f}");
            }
        }
    }

    #[test]
    fn windows_and_runs_do_not_change_results() {
        // 70 segments: windows of 1, 3, 7 (ragged last windows), all at once; 1–5 runs.
        let beta = 0.25;
        let m = (SEGMENT_TARGET / beta) as u128 * 70;
        let step = BetaStep::new(&[11; 32], m, beta, &[5, 6, 7]).unwrap();
        assert_eq!(step.segments, 70);
        let default = step.run(1).unwrap();
        for (window, runs) in [(1, 1), (3, 2), (7, 3), (70, 5), (256, 1)] {
            assert_eq!(
                step.run_windowed(1, 0, 70, &[], window, runs).unwrap(),
                default
            );
        }
        assert!(default.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn kept_codes_drawn_in_equal_the_merge() {
        // Kept codes (repeats, at segment edges, past the last segment start)
        // written during the draw: the merge of the draw and the kept codes,
        // for any window, run count and range of segments.
        let beta = 0.25;
        let m = (SEGMENT_TARGET / beta) as u128 * 9 + 1234;
        let seg = (SEGMENT_TARGET / beta) as u128;
        let excluded: Vec<u128> = vec![0, 5, seg - 1, seg, 3 * seg + 7, 8 * seg + 1, m - 1];
        let step = BetaStep::new(&[12; 32], m, beta, &excluded).unwrap();
        let kept: Vec<u128> = vec![0, 0, 5, seg - 1, seg, seg, 3 * seg + 7, 8 * seg + 1, m - 1];
        for (first, stop) in [(0, 10), (1, 4), (8, 10), (3, 3)] {
            let (lo, hi) = (step.code_at(first), step.code_at(stop));
            let ours: Vec<u128> = kept
                .iter()
                .copied()
                .filter(|c| (lo..hi).contains(c))
                .collect();
            let expected = merge_sorted(
                &step.run_segments(1, first, stop).unwrap(),
                &from_u128(&ours, 1),
                1,
            )
            .unwrap();
            for (window, runs) in [(1, 1), (3, 2), (64, 2), (256, 3)] {
                let got = step
                    .run_windowed(1, first, stop.min(step.segments), &ours, window, runs)
                    .unwrap();
                let diff = got.iter().zip(&expected).position(|(a, b)| a != b);
                assert!(
                    got == expected,
                    "{first}..{stop} {window} {runs}: {} vs {} rows, first difference at {diff:?}",
                    got.len(),
                    expected.len()
                );
            }
            assert_eq!(step.run_segments_with(2, first, stop, &ours).unwrap(), {
                let wide: Vec<u64> = expected.iter().flat_map(|&c| [0, c]).collect();
                wide
            });
        }
        // Not sorted, not excluded, outside the range: errors, not panics.
        assert!(step.run_segments_with(1, 0, 10, &[5, 0]).is_err());
        assert!(step.run_segments_with(1, 0, 10, &[6]).is_err());
        assert!(step.run_segments_with(1, 1, 2, &[0]).is_err());
    }

    #[test]
    fn segment_ranges_drawn_apart_concatenate_to_the_whole() {
        // What a streamed write or a Dask task relies on: segments [a, b) hold
        // exactly the whole draw's codes in [a·seg_len, b·seg_len), and a task
        // that knows only the excluded codes of its own range draws the same.
        let beta = 0.25;
        let m = (SEGMENT_TARGET / beta) as u128 * 9 + 1234; // a ragged last segment
        let excluded: Vec<u128> = (0..m).step_by(97).collect();
        let step = BetaStep::new(&[4; 32], m, beta, &excluded).unwrap();
        assert_eq!(step.segments, 10);
        let whole = step.run(1).unwrap();
        let mut parts = Vec::new();
        for (a, b) in [(0u64, 3u64), (3, 4), (4, 4), (4, 10), (10, 99)] {
            let (lo, hi) = (u128::from(a) * step.seg_len, u128::from(b) * step.seg_len);
            let own: Vec<u128> = excluded
                .iter()
                .copied()
                .filter(|&c| lo <= c && c < hi)
                .collect();
            let part = BetaStep::new(&[4; 32], m, beta, &own)
                .unwrap()
                .run_segments(1, a, b)
                .unwrap();
            assert!(part
                .iter()
                .all(|&c| lo <= u128::from(c) && u128::from(c) < hi));
            assert_eq!(part, step.run_segments(1, a, b).unwrap());
            parts.extend(part);
        }
        assert_eq!(parts, whole);
    }

    #[test]
    fn thread_count_and_limbs_do_not_change_results() {
        let run = |threads, limbs| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    BetaStep::new(&[5; 32], 2_000_000, 0.2, &[10, 20, 30])
                        .unwrap()
                        .run(limbs)
                        .unwrap()
                })
        };
        let one = run(1, 1);
        assert_eq!(one, run(2, 1));
        let wide = run(2, 2);
        assert_eq!(to_u128(&wide, 2).unwrap(), to_u128(&one, 1).unwrap());
    }

    #[test]
    fn huge_domains_work_without_touching_every_code() {
        // m = 2^120, β chosen for about 50,000 selections.
        let m = 1u128 << 120;
        let beta = 50_000.0 / m as f64;
        let step = BetaStep::new(&[3; 32], m, beta, &[0, 1u128 << 100]).unwrap();
        let codes = to_u128(&step.run(2).unwrap(), 2).unwrap();
        assert!((codes.len() as f64 - 50_000.0).abs() < 5.0 * 223.6);
        assert!(codes.windows(2).all(|w| w[0] < w[1]) && codes.iter().all(|&c| c < m));
        // Selected codes are spread uniformly: the mean is near m/2 (sd m/sqrt(12·50000)).
        let mean = codes.iter().map(|&c| c as f64).sum::<f64>() / codes.len() as f64;
        assert!((mean / m as f64 - 0.5).abs() < 5.0 * 0.00129);
    }

    #[test]
    fn keep_records_uses_first_and_rest_probabilities() {
        let codes: Vec<u64> = (0..200_000).map(|i| i / 2).collect(); // every code twice
        let keep = keep_records(&[8; 32], 0, &codes, &[0.9], 0.1).unwrap();
        let first = keep.iter().step_by(2).filter(|&&k| k).count() as f64 / 100_000.0;
        let rest = keep.iter().skip(1).step_by(2).filter(|&&k| k).count() as f64 / 100_000.0;
        assert!((first - 0.9).abs() < 5.0 * 0.00095 && (rest - 0.1).abs() < 5.0 * 0.00095);
    }

    #[test]
    fn thinning_keeps_with_the_product_of_ratios() {
        // Two attributes of sizes 2 and 3; code 5 = digits (1, 2): 0.5 · 0.4 = 0.2.
        let codes = vec![5u128; 100_000];
        let keep = thin_product(&[2; 32], 0, &codes, &[2, 3], &[1.0, 0.5, 1.0, 0.7, 0.4]).unwrap();
        let f = keep.iter().filter(|&&k| k).count() as f64 / 100_000.0;
        assert!((f - 0.2).abs() < 5.0 * (0.16f64 / 100_000.0).sqrt(), "{f}");
        assert!(thin_product(&[2; 32], 0, &codes, &[2, 3], &[1.0]).is_err());
    }

    #[test]
    fn merge_keeps_order_and_duplicates() {
        assert_eq!(
            merge_sorted(&[1, 4, 4, 9], &[2, 4, 10], 1).unwrap(),
            vec![1, 2, 4, 4, 4, 9, 10]
        );
        assert_eq!(
            merge_sorted(&[0, 5, 1, 0], &[0, 7], 2).unwrap(),
            vec![0, 5, 0, 7, 1, 0]
        );
    }

    #[test]
    fn merge_equals_sorting_the_concatenation() {
        // Brute force over sizes from empty to lopsided to equal, 1 and 2 limbs,
        // with many ties (values drawn from a small range).
        let mut rng = segment_rng(&[3; 32], 0);
        for limbs in 1..=2 {
            for (na, nb) in [
                (0, 0),
                (0, 5),
                (1, 1000),
                (3, 700),
                (50, 60),
                (400, 2),
                (9, 0),
            ] {
                let mut draw = |n: usize| {
                    let mut rows: Vec<Vec<u64>> = (0..n)
                        .map(|_| (0..limbs).map(|_| rng.random_range(0..6u64)).collect())
                        .collect();
                    rows.sort();
                    rows
                };
                let (a, b) = (draw(na), draw(nb));
                let mut all: Vec<Vec<u64>> = a.iter().chain(&b).cloned().collect();
                all.sort();
                let flat = |rows: &[Vec<u64>]| rows.concat();
                assert_eq!(
                    merge_sorted(&flat(&a), &flat(&b), limbs).unwrap(),
                    flat(&all)
                );
                assert_eq!(
                    merge_sorted(&flat(&b), &flat(&a), limbs).unwrap(),
                    flat(&all)
                );
            }
        }
    }

    #[test]
    fn thinning_refuses_bad_radices_and_codes() {
        let key = [2; 32];
        // Once: "attempt to calculate the remainder with a divisor of zero".
        assert_eq!(
            thin_product(&key, 0, &[0], &[2, 0], &[1.0; 2]).unwrap_err(),
            KernelError::Parameter(
                "radix of attribute 1 is 0; every attribute needs at least one value".into()
            )
        );
        // Once: the sum wrapped and ratios were indexed past their end.
        let r = [1u64 << 63, 1 << 63, 2];
        assert_eq!(
            thin_product(&key, 0, &[0], &r, &[1.0; 2]).unwrap_err(),
            KernelError::Capacity("the radices sum past 2^64".into())
        );
        assert_eq!(
            thin_product(&key, 0, &[0], &[2, 3], &[1.0; 4]).unwrap_err(),
            KernelError::Shape(
                "4 ratios for radices summing to 5; one ratio per domain value".into()
            )
        );
        assert_eq!(
            thin_product(&key, 0, &[5, 6], &[2, 3], &[1.0; 5]).unwrap_err(),
            KernelError::InvalidCode { row: 1 }
        );
        // Π radices past 2^128 (2^130): every u128 code is in the domain.
        let keep = thin_product(&key, 0, &[u128::MAX], &[2; 130], &[1.0; 260]).unwrap();
        assert_eq!(keep, vec![true]);
    }

    #[test]
    fn the_last_beta_segment_of_a_domain_near_2_128_is_drawn() {
        // Segments of 2^120 ranks: the 256th ends past u128::MAX, which once
        // overflowed (a panic in debug builds, no codes from it in release).
        let m = u128::MAX;
        let beta = 2f64.powi(-110);
        let step = BetaStep::new(&[9; 32], m, beta, &[]).unwrap();
        assert_eq!(step.seg_len, 1 << 120);
        let codes = to_u128(&step.run(2).unwrap(), 2).unwrap();
        let top = codes.iter().filter(|&&c| c >= 255 << 120).count();
        // Poisson(1024): far from 0 and within 10 sd.
        assert!((top as f64 - 1024.0).abs() < 320.0, "{top}");
        assert!(codes.windows(2).all(|w| w[0] < w[1]) && codes.iter().all(|&c| c < m));
    }

    #[test]
    fn beta_steps_larger_than_memory_are_errors_not_aborts() {
        // β·m = 2^70 codes in 2^54 segments: their counts alone once aborted the
        // process ("memory allocation of … bytes failed"); now refused up front.
        let step = BetaStep::new(&[1; 32], 1 << 100, 2f64.powi(-30), &[]).unwrap();
        assert_eq!(step.segments, 1 << 54);
        let err = step.run(2).unwrap_err().to_string();
        assert!(
            err.contains("about 1.181e21 codes, more than memory"),
            "{err}"
        );
    }

    #[test]
    fn code_words_must_be_whole_codes() {
        assert!(to_u128(&[1, 2, 3], 2).is_err());
        assert!(to_u128(&[1, 2], 3).is_err());
        assert!(merge_sorted(&[1, 2], &[3], 0).is_err());
        assert!(merge_sorted(&[1, 2, 3], &[3, 4], 2).is_err());
    }
}
