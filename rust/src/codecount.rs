//! Q(V) straight from tuple codes: how many codes a condition's truth table
//! marks true, in one pass over the codes and without decoding them.
//!
//! A condition reads a few attributes; its truth table is over the projection
//! of D on them (first attribute slowest). Each code's index into the table is
//! its sub-code over those attributes: for a run of adjacent attributes j..l,
//! (c div s_l) mod (r_j ⋯ r_l) with s_l the stride of attribute l (the product
//! of the radices after it), one strength-reduced division each (as the
//! decoder peels digits, `encode.rs`), in 32 bits when every code is. Runs
//! separated by a few unread attributes are merged into one run over the gap
//! (the table repeated over the gap's values) while the table stays small
//! enough for L1/L2, so a query costs one or two divisions per code whatever
//! its attributes; then one byte lookup. Parallel over chunks of codes, in
//! blocks whose sub-codes stay in L1.

use crate::encode::CHUNK;
use crate::error::{check_radices, KernelError};
use rayon::prelude::*;
use strength_reduce::StrengthReducedU64;

/// Codes whose sub-codes are formed together (the block's indices stay in L1).
const BLOCK: usize = 1024;

/// Cells up to which adjacent runs are merged over the attributes between
/// them (a table of this many bytes stays in L1/L2).
const MERGED_CELLS: u64 = 1 << 16;

/// Attributes `first..=last` read as one sub-code: (c div stride) mod cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    first: usize,
    last: usize,
}

/// One run's two divisions (64-bit codes), strength-reduced; None where the
/// divisor is 1 (a run ending at the last attribute) or the modulo is not
/// needed (the quotient is already below its cells for a code below m).
trait SubCode: Sync {
    fn sub(&self, code: u64) -> u64;
}

struct Wide(Option<StrengthReducedU64>, Option<StrengthReducedU64>);

impl SubCode for Wide {
    #[inline(always)]
    fn sub(&self, code: u64) -> u64 {
        let mut c = code;
        if let Some(s) = self.0 {
            c = c / s;
        }
        if let Some(r) = self.1 {
            c = c % r;
        }
        c
    }
}

/// How many `codes` (tuple codes over `radices`, each below m = Π radices ≤
/// 2^64) make `table` true: `table` is over the attributes `read` (positions
/// in increasing order), Π radices[read] cells, the first read attribute
/// slowest. A code at or above m is an `InvalidCode` error naming its row.
pub fn count_codes_in_table(
    codes: &[u64],
    radices: &[u64],
    read: &[usize],
    table: &[bool],
) -> Result<u64, KernelError> {
    let m = check_arguments(radices, read, table)?;
    let runs = merged_runs(radices, read);
    let bytes = spread_table(radices, read, &runs, table);
    // A run of radix-1 attributes adds nothing to the index: left out (its
    // stride alone could be 2^64). Every other run's cells are at most the
    // table's, and its stride at most m / 2: both fit a u64.
    let runs: Vec<Run> = runs
        .into_iter()
        .filter(|r| product(&radices[r.first..=r.last]) > 1)
        .collect();
    let cells: Vec<u64> = runs
        .iter()
        .map(|r| product(&radices[r.first..=r.last]) as u64)
        .collect();
    let stride = |r: &Run| product(&radices[r.last + 1..]) as u64;
    // The quotient needs no modulo when the attributes before the run hold one value.
    let modulo = |r: &Run| product(&radices[..r.first]) > 1;
    if m < 1u128 << 32 {
        // Every code is below m (checked in the pass), so it and every divisor fit a u32.
        let subs: Vec<Narrow> = runs
            .iter()
            .zip(&cells)
            .map(|(r, &c)| Narrow {
                stride: Divide32::new(stride(r)),
                cells: Divide32::new(c),
                radix: c as u32,
            })
            .collect();
        let bands =
            box_of(table, &read.iter().map(|&j| radices[j]).collect::<Vec<_>>()).map(|bounds| {
                bounds
                    .iter()
                    .zip(read)
                    .filter(|(&(lo, hi), &j)| lo > 0 || hi + 1 < radices[j])
                    .map(|(&(lo, hi), &j)| {
                        // Below m < 2^32: every span and bound fits a u32.
                        let s = product(&radices[j + 1..]) as u64;
                        Band {
                            span: Divide32::new(radices[j] * s),
                            modulus: (radices[j] * s) as u32,
                            low: (lo * s) as u32,
                            width: ((hi - lo + 1) * s) as u32,
                        }
                    })
                    .collect()
            });
        count_narrow(codes, m as u64, &subs, bands, &bytes)
    } else {
        let subs: Vec<Wide> = runs
            .iter()
            .zip(&cells)
            .map(|(r, &c)| {
                Wide(
                    Some(stride(r))
                        .filter(|&s| s > 1)
                        .map(StrengthReducedU64::new),
                    Some(c).filter(|_| modulo(r)).map(StrengthReducedU64::new),
                )
            })
            .collect();
        count_blocks(codes, m, &subs, &cells, &bytes)
    }
}

/// Π radices, in u128 (a whole domain's may be 2^64).
fn product(radices: &[u64]) -> u128 {
    radices.iter().map(|&r| u128::from(r)).product()
}

/// m = Π radices (≤ 2^64, as u128), after checking `read` and the table's size.
fn check_arguments(radices: &[u64], read: &[usize], table: &[bool]) -> Result<u128, KernelError> {
    check_radices(radices)?;
    let m = radices
        .iter()
        .try_fold(1u128, |acc, &r| {
            acc.checked_mul(u128::from(r)).filter(|&p| p <= 1u128 << 64)
        })
        .ok_or_else(|| {
            KernelError::Shape(format!(
                "the product of the {} radices exceeds 2^64: codes take more than one u64",
                radices.len()
            ))
        })?;
    if let Some(w) = read.windows(2).find(|w| w[0] >= w[1]) {
        return Err(KernelError::Shape(format!(
            "read attributes must increase, got {} then {}",
            w[0], w[1]
        )));
    }
    if let Some(&j) = read.iter().find(|&&j| j >= radices.len()) {
        return Err(KernelError::Shape(format!(
            "read attribute {j} of {} attributes",
            radices.len()
        )));
    }
    let cells: u128 = read.iter().map(|&j| u128::from(radices[j])).product();
    if cells != table.len() as u128 {
        return Err(KernelError::Shape(format!(
            "table of {} cells for read attributes of {cells} cells",
            table.len()
        )));
    }
    Ok(m)
}

/// Maximal runs of adjacent read attributes, each merged with the next over
/// the attributes between them while the merged table has at most
/// `MERGED_CELLS` cells.
fn merged_runs(radices: &[u64], read: &[usize]) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for &j in read {
        match runs.last_mut() {
            Some(run) if run.last + 1 == j => run.last = j,
            _ => runs.push(Run { first: j, last: j }),
        }
    }
    let mut merged: Vec<Run> = Vec::with_capacity(runs.len());
    for run in runs {
        if let Some(prev) = merged.last_mut() {
            let wider = Run {
                first: prev.first,
                last: run.last,
            };
            if product(&radices[wider.first..=wider.last]) <= u128::from(MERGED_CELLS) {
                *prev = wider;
                continue;
            }
        }
        merged.push(run);
    }
    merged
}

/// The table over every attribute of `runs` (read ones and the gaps merged in),
/// first slowest, as bytes: a cell's value is the original table's at the
/// cell's digits of the read attributes.
fn spread_table(radices: &[u64], read: &[usize], runs: &[Run], table: &[bool]) -> Vec<u8> {
    let axes: Vec<usize> = runs.iter().flat_map(|r| r.first..=r.last).collect();
    if axes.len() == read.len() {
        return table.iter().map(|&t| u8::from(t)).collect();
    }
    // Merged tables have at most MERGED_CELLS cells: digit by digit is cheap.
    let cells: u64 = axes.iter().map(|&j| radices[j]).product();
    (0..cells)
        .map(|mut cell| {
            let (mut index, mut weight) = (0u64, 1u64);
            for &j in axes.iter().rev() {
                let digit = cell % radices[j];
                cell /= radices[j];
                if read.contains(&j) {
                    index += digit * weight;
                    weight *= radices[j];
                }
            }
            u8::from(table[index as usize])
        })
        .collect()
}

/// The pass: per block, each run's sub-code folded into the table index, then
/// the table's bytes summed.
fn count_blocks<S: SubCode>(
    codes: &[u64],
    m: u128,
    subs: &[S],
    cells: &[u64],
    table: &[u8],
) -> Result<u64, KernelError> {
    codes
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            let mut index = [0u64; BLOCK];
            let mut total = 0u64;
            for (b, block) in chunk.chunks(BLOCK).enumerate() {
                let top = block.iter().copied().max().unwrap_or(0);
                if u128::from(top) >= m {
                    let at = block.iter().position(|&x| u128::from(x) >= m).unwrap_or(0);
                    return Err(KernelError::InvalidCode {
                        row: c * CHUNK + b * BLOCK + at,
                    });
                }
                let index = &mut index[..block.len()];
                index.fill(0);
                for (sub, &n) in subs.iter().zip(cells) {
                    for (i, &code) in index.iter_mut().zip(block) {
                        *i = *i * n + sub.sub(code);
                    }
                }
                total += index
                    .iter()
                    .map(|&i| u64::from(table[i as usize]))
                    .sum::<u64>();
            }
            Ok(total)
        })
        .try_reduce(|| 0, |a, b| Ok(a + b))
}

/// n div d for n < 2^32 without a branch, so that a loop of them vectorises:
/// ⌊n·M / 2^64⌋ with M = ⌈2^64 / d⌉ in 32-bit halves (the strength_reduce
/// crate's u32 division, which `encode.rs` uses, but for its power-of-two
/// branch: that keeps loops scalar, here 3-4× slower); d = 1 is the identity.
#[derive(Clone, Copy)]
struct Divide32 {
    hi: u32,
    lo: u32,
    one: bool,
}

impl Divide32 {
    fn new(d: u64) -> Self {
        match d {
            // d ≥ 2: M ≤ 2^63, so its high half fits a u32.
            2.. => {
                let m = u64::MAX / d + 1;
                Divide32 {
                    hi: (m >> 32) as u32,
                    lo: m as u32,
                    one: false,
                }
            }
            _ => Divide32 {
                hi: 0,
                lo: 0,
                one: true,
            },
        }
    }

    #[inline(always)]
    fn div(self, n: u32) -> u32 {
        let wide = u64::from(n);
        let q = (wide * u64::from(self.hi) + ((wide * u64::from(self.lo)) >> 32)) >> 32;
        if self.one {
            n
        } else {
            q as u32
        }
    }
}

/// A run's sub-code of a 32-bit code: (n div stride) mod radix (for the
/// leading run the modulo changes nothing: kept, so every run is alike).
#[derive(Clone, Copy)]
struct Narrow {
    stride: Divide32,
    cells: Divide32,
    radix: u32,
}

impl Narrow {
    #[inline(always)]
    fn sub(self, n: u32) -> u32 {
        let q = self.stride.div(n);
        q - self.cells.div(q) * self.radix
    }
}

/// The true cells of a table (over attributes of `radices`, first slowest)
/// when they form a box, a product of one interval per attribute (an
/// equality, a range, an AND of them): each attribute's (first, last) value;
/// None otherwise or when no cell is true.
fn box_of(table: &[bool], radices: &[u64]) -> Option<Vec<(u64, u64)>> {
    let mut bounds = vec![(u64::MAX, 0u64); radices.len()];
    let mut trues = 0u64;
    for (cell, _) in table.iter().enumerate().filter(|(_, &t)| t) {
        trues += 1;
        let mut rest = cell as u64;
        for (b, &r) in bounds.iter_mut().zip(radices).rev() {
            let x = rest % r;
            rest /= r;
            *b = (b.0.min(x), b.1.max(x));
        }
    }
    let volume: u64 = bounds
        .iter()
        .map(|&(lo, hi)| (hi + 1).saturating_sub(lo))
        .product();
    (trues > 0 && trues == volume).then_some(bounds)
}

/// One attribute's interval of a box, as residues: its digit is in lo..=hi
/// exactly when (n mod span) − lo·stride < (hi − lo + 1)·stride (unsigned),
/// span = radix·stride: one division per attribute the box narrows, no digit
/// formed (an attribute whose interval is all its values needs none).
#[derive(Clone, Copy)]
struct Band {
    span: Divide32,
    modulus: u32,
    low: u32,
    width: u32,
}

/// The tests a block runs: a box's bands, or sub-codes looked up in a table
/// (padded to a power of two, so a masked index needs no bounds check).
enum Test<'a> {
    Bands(Vec<Band>),
    Lookup(&'a [Narrow], Vec<u8>, u32),
}

/// The pass for m < 2^32: per block, the codes as u32, then per run a loop
/// that vectorises (a band test, or the run's sub-code folded into the
/// index and the table's bytes summed).
fn count_narrow(
    codes: &[u64],
    m: u64,
    runs: &[Narrow],
    bands: Option<Vec<Band>>,
    table: &[u8],
) -> Result<u64, KernelError> {
    let test = match bands {
        Some(bands) => Test::Bands(bands),
        None => {
            let mut padded = table.to_vec();
            padded.resize(table.len().next_power_of_two(), 0);
            let mask = (padded.len() - 1) as u32;
            Test::Lookup(runs, padded, mask)
        }
    };
    let avx2 = has_avx2();
    codes
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            let counted = if avx2 {
                // SAFETY: the CPU has AVX2, checked above.
                unsafe { narrow_chunk_avx2(chunk, m, &test) }
            } else {
                narrow_chunk(chunk, m, &test)
            };
            counted.map_err(|at| KernelError::InvalidCode {
                row: c * CHUNK + at,
            })
        })
        .try_reduce(|| 0, |a, b| Ok(a + b))
}

fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `narrow_chunk` compiled for AVX2 (the default x86-64 target has only SSE2).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn narrow_chunk_avx2(chunk: &[u64], m: u64, test: &Test<'_>) -> Result<u64, usize> {
    narrow_chunk(chunk, m, test)
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn narrow_chunk_avx2(chunk: &[u64], m: u64, test: &Test<'_>) -> Result<u64, usize> {
    narrow_chunk(chunk, m, test)
}

/// One chunk's count, or the position of its first code at or above m.
#[inline(always)]
fn narrow_chunk(chunk: &[u64], m: u64, test: &Test<'_>) -> Result<u64, usize> {
    let mut n = [0u32; BLOCK];
    let mut acc = [0u32; BLOCK];
    let mut total = 0u64;
    for (b, block) in chunk.chunks(BLOCK).enumerate() {
        let (n, acc) = (&mut n[..block.len()], &mut acc[..block.len()]);
        let mut top = 0u64;
        for (x, &code) in n.iter_mut().zip(block) {
            top = top.max(code);
            *x = code as u32;
        }
        if top >= m {
            return Err(b * BLOCK + block.iter().position(|&x| x >= m).unwrap_or(0));
        }
        let ones: u32 = match test {
            Test::Bands(bands) => {
                acc.fill(1);
                for band in bands {
                    for (a, &x) in acc.iter_mut().zip(n.iter()) {
                        let residue = x - band.span.div(x) * band.modulus;
                        *a &= u32::from(residue.wrapping_sub(band.low) < band.width);
                    }
                }
                acc.iter().sum()
            }
            Test::Lookup(runs, table, mask) => {
                acc.fill(0);
                for run in runs.iter() {
                    for (i, &x) in acc.iter_mut().zip(n.iter()) {
                        *i = *i * run.radix + run.sub(x);
                    }
                }
                acc.iter()
                    .map(|&i| u32::from(table[(i & mask) as usize]))
                    .sum()
            }
        };
        total += u64::from(ones);
    }
    Ok(total)
}

#[cfg(test)]
mod tests;
