//! SPLU-Gen's iterative Bayesian reconstruction (Eq. 13/14) for a batch of
//! queries, each run to its own stopping rule, the queries spread over the
//! threads.
//!
//! What each step computes and why the rules stop where they do is the Python
//! layer's to state (`privpub.splu.em`, whose docstring a reader checks against
//! the paper; `tests/splu/em_reference.py` is the same iteration written out in
//! numpy, which the tests hold this kernel to). Here: x' = x ∘ M (y ⊘ Mᵀx),
//! with M = I_2 ⊗ M_1 ⊗ … ⊗ M_w, each entry made from the factors as it is
//! needed (O(K²·w) per step, no K × K matrix kept), M_j = [[1 − r_j, r_j], [(γ−1)/γ, 1/γ]] and r_j the ¬s_j → s_j
//! rate from the current x.
//!
//! # Citations
//! * Wong, Fu, Wang, Yu, Pei, *Small Sum Privacy and Large Sum Utility in
//!   Data Publishing*, Sec. 5 (Eq. 13/14, the reconstruction and its 1% rule).
//! * Aitken's Δ² process (the `Count` rule's extrapolated limit).

use crate::error::KernelError;
use rayon::prelude::*;

/// When a query's iteration stops (`privpub.splu.em.paper_em`'s `stopping`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stopping {
    /// The requested count (the last state) alone: when it no longer moves
    /// (|Δ_t| ≤ 10⁻¹⁰·max(|x|, 1)), or when its Aitken limit
    /// L_t = x_t + Δ_t·ρ_t/(1 − ρ_t), ρ_t = Δ_t/Δ_{t−1} ∈ [0, 1), moved by at
    /// most `tol`·max(|L_t|, 1); then L_t, clipped to [0, Σx], is reported.
    Count { tol: f64 },
    /// Sec. 5's rule: every state's |Δx_i| ≤ `tol`·x_i.
    Paper { tol: f64 },
}

/// The batch's result: `x` (Q × K, the last state of each row the reported
/// count), the steps each query ran, and whether its rule fired before the cap.
#[derive(Debug, Clone, PartialEq)]
pub struct EmBatch {
    pub x: Vec<f64>,
    pub iterations: Vec<i64>,
    pub converged: Vec<bool>,
}

/// The `Count` rule's "no longer moves": |Δ_t| at most this, relative to max(|x|, 1).
const STILL: f64 = 1e-10;

/// Eq. 13/14 for each row of `y` (published state counts, Q rows of `states`
/// = 2^{w+1} values: P slowest, then s_1 … s_w, bit 1 = the query's value),
/// starting from the same row of `start`. A row whose y sums to 0 is left at
/// its start, converged after 0 steps (as the Python reference does).
///
/// Errors (never a panic): `states` not a power of two ≥ 4, lengths that do
/// not match, γ < 2, a tolerance that is not positive and finite, a negative
/// `max_iter`, or a count in `y` or `start` that is negative or not finite
/// (named by row and state).
#[allow(clippy::too_many_arguments)]
pub fn em_batch(
    y: &[f64],
    start: &[f64],
    states: usize,
    group_size: usize,
    exact_rate: bool,
    stopping: Stopping,
    max_iter: i64,
) -> Result<EmBatch, KernelError> {
    if states < 4 || !states.is_power_of_two() {
        return Err(KernelError::Shape(format!(
            "states must be a power of two ≥ 4 (P and at least one sensitive value), got {states}"
        )));
    }
    if y.len() % states != 0 || start.len() != y.len() {
        return Err(KernelError::Shape(format!(
            "y holds {} values and start {}: both must be rows of {states} states",
            y.len(),
            start.len()
        )));
    }
    if group_size < 2 {
        return Err(KernelError::Parameter(format!(
            "group_size must be at least 2, got {group_size}"
        )));
    }
    let tol = match stopping {
        Stopping::Count { tol } | Stopping::Paper { tol } => tol,
    };
    if !(tol.is_finite() && tol > 0.0) {
        return Err(KernelError::Parameter(format!(
            "tol must be positive and finite, got {tol}"
        )));
    }
    if max_iter < 0 {
        return Err(KernelError::Parameter(format!(
            "max_iter must be non-negative, got {max_iter}"
        )));
    }
    for (name, values) in [("y", y), ("start", start)] {
        if let Some(i) = values.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(KernelError::Parameter(format!(
                "{name}[{}, {}] = {}: state counts must be finite and non-negative",
                i / states,
                i % states,
                values[i]
            )));
        }
    }
    let w = states.trailing_zeros() as usize - 1;
    let mut x = start.to_vec();
    let (iterations, converged): (Vec<i64>, Vec<bool>) = x
        .par_chunks_mut(states)
        .zip(y.par_chunks(states))
        .map(|(x, y)| {
            let mut query = Query::new(w, group_size as f64, exact_rate);
            query.run(y, x, stopping, max_iter)
        })
        .unzip();
    Ok(EmBatch {
        x,
        iterations,
        converged,
    })
}

/// One query's scratch: the factors M_j (m00, m01, m10, m11), Mᵀx, y ⊘ Mᵀx, the
/// new x, and x with the states outside s_j set to 0 (for f_j).
struct Query {
    w: usize,
    gamma: f64,
    exact_rate: bool,
    factors: Vec<[f64; 4]>,
    denom: Vec<f64>,
    ratio: Vec<f64>,
    new: Vec<f64>,
    masked: Vec<f64>,
}

impl Query {
    fn new(w: usize, gamma: f64, exact_rate: bool) -> Self {
        let k = 2usize << w;
        Query {
            w,
            gamma,
            exact_rate,
            factors: vec![[0.0; 4]; w],
            denom: vec![0.0; k],
            ratio: vec![0.0; k],
            new: vec![0.0; k],
            masked: vec![0.0; k],
        }
    }

    /// Runs the iteration in place on `x`; returns (steps, converged).
    fn run(&mut self, y: &[f64], x: &mut [f64], stopping: Stopping, max_iter: i64) -> (i64, bool) {
        if pairwise_sum(y) == 0.0 {
            return (0, true);
        }
        let last = x.len() - 1;
        let (mut step, mut limit, mut result) = (f64::NAN, f64::NAN, x[last]);
        let mut outcome = (max_iter, false);
        for t in 1..=max_iter {
            self.step(y, x);
            let new = &self.new;
            let done = match stopping {
                Stopping::Paper { tol } => {
                    result = new[last];
                    new.iter()
                        .zip(x.iter())
                        .all(|(n, o)| (n - o).abs() <= tol * o)
                }
                Stopping::Count { tol } => {
                    let change = new[last] - x[last];
                    let rate = change / step;
                    let ahead = if (0.0..1.0).contains(&rate) {
                        new[last] + change * rate / (1.0 - rate)
                    } else {
                        f64::NAN
                    };
                    // NaN compares false: no limit yet means not settled.
                    let still = change.abs() <= STILL * new[last].abs().max(1.0);
                    let settled = (ahead - limit).abs() <= tol * ahead.abs().max(1.0);
                    result = if still || !settled {
                        new[last]
                    } else {
                        // max then min, as numpy's clip (no panic on any bound)
                        ahead.max(0.0).min(pairwise_sum(new))
                    };
                    (step, limit) = (change, ahead);
                    still || settled
                }
            };
            x.copy_from_slice(new);
            if done {
                outcome = (t, true);
                break;
            }
        }
        x[last] = result;
        outcome
    }

    /// M_ik: 1 where P agrees (0 otherwise), times each factor's entry in turn.
    fn entry(&self, i: usize, k: usize) -> f64 {
        let w = self.w;
        let mut m = if i >> w == k >> w { 1.0 } else { 0.0 };
        for (j, f) in self.factors.iter().enumerate() {
            let shift = w - 1 - j; // s_{j+1}'s bit
            m *= f[2 * ((i >> shift) & 1) + ((k >> shift) & 1)];
        }
        m
    }

    /// One step of Eq. 13/14 from `x`: the new x in `self.new`. The sums run in
    /// the reference's order (tests/splu/em_reference.py: numpy's pairwise sum
    /// of a row for Σx and f_j, the latter over all K states with the others
    /// at 0, as `transition_matrix` sums; index order for Mᵀx and M(y ⊘ Mᵀx)),
    /// so the two agree to the bit and stop after the same steps.
    fn step(&mut self, y: &[f64], x: &[f64]) {
        let (w, g, k) = (self.w, self.gamma, x.len());
        let n = pairwise_sum(x);
        for j in 0..w {
            let stride = 1usize << (w - 1 - j);
            for (i, (m, &v)) in self.masked.iter_mut().zip(x).enumerate() {
                *m = if i & stride != 0 { v } else { 0.0 };
            }
            let f = pairwise_sum(&self.masked);
            let rate = if self.exact_rate {
                if n > f {
                    f * (g - 1.0) / (g * (n - f))
                } else {
                    0.0
                }
            } else if n > 0.0 {
                f / n
            } else {
                0.0
            };
            self.factors[j] = [1.0 - rate, rate, (g - 1.0) / g, 1.0 / g];
        }
        self.denom.fill(0.0);
        for (i, &xi) in x.iter().enumerate() {
            for c in 0..k {
                self.denom[c] += self.entry(i, c) * xi;
            }
        }
        for ((r, &d), &yc) in self.ratio.iter_mut().zip(&self.denom).zip(y) {
            *r = if d > 0.0 { yc / d } else { 0.0 };
        }
        for (i, &xi) in x.iter().enumerate() {
            let mut back = 0.0;
            for (c, &r) in self.ratio.iter().enumerate() {
                back += self.entry(i, c) * r;
            }
            self.new[i] = xi * back;
        }
    }
}

/// numpy's sum of a float64 row (`pairwise_sum` in its loops_utils.h): in order
/// below 8 values; eight running sums up to 128, combined pairwise; halves above.
fn pairwise_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        return a.iter().fold(0.0, |s, v| s + v);
    }
    if n <= 128 {
        let mut r = [0.0; 8];
        r.copy_from_slice(&a[..8]);
        let whole = n - n % 8;
        for chunk in a[8..whole].chunks_exact(8) {
            for (acc, v) in r.iter_mut().zip(chunk) {
                *acc += v;
            }
        }
        let head = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        return a[whole..].iter().fold(head, |s, v| s + v);
    }
    let half = n / 2 - (n / 2) % 8;
    pairwise_sum(&a[..half]) + pairwise_sum(&a[half..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::message;

    /// M (K × K, rows original, columns published) written out as the
    /// Kronecker product I_2 ⊗ M_1 ⊗ … ⊗ M_w, entry by entry.
    fn dense(x: &[f64], g: f64, exact_rate: bool) -> Vec<Vec<f64>> {
        let k = x.len();
        let w = k.trailing_zeros() as usize - 1;
        let n: f64 = x.iter().sum();
        let bit = |i: usize, j: usize| (i >> (w - j)) & 1; // j = 0 is P
        let rates: Vec<f64> = (1..=w)
            .map(|j| {
                let f: f64 = (0..k).filter(|&i| bit(i, j) == 1).map(|i| x[i]).sum();
                match (exact_rate, n > f, n > 0.0) {
                    (true, true, _) => f * (g - 1.0) / (g * (n - f)),
                    (false, _, true) => f / n,
                    _ => 0.0,
                }
            })
            .collect();
        (0..k)
            .map(|i| {
                (0..k)
                    .map(|c| {
                        if bit(i, 0) != bit(c, 0) {
                            return 0.0;
                        }
                        (1..=w)
                            .map(|j| match (bit(i, j), bit(c, j)) {
                                (0, 0) => 1.0 - rates[j - 1],
                                (0, _) => rates[j - 1],
                                (_, 0) => (g - 1.0) / g,
                                _ => 1.0 / g,
                            })
                            .product()
                    })
                    .collect()
            })
            .collect()
    }

    /// One step of Eq. 13/14 with the dense matrix.
    fn dense_step(y: &[f64], x: &[f64], g: f64, exact_rate: bool) -> Vec<f64> {
        let m = dense(x, g, exact_rate);
        let k = x.len();
        let denom: Vec<f64> = (0..k)
            .map(|c| (0..k).map(|i| m[i][c] * x[i]).sum())
            .collect();
        let ratio: Vec<f64> = (0..k)
            .map(|c| if denom[c] > 0.0 { y[c] / denom[c] } else { 0.0 })
            .collect();
        (0..k)
            .map(|i| x[i] * (0..k).map(|c| m[i][c] * ratio[c]).sum::<f64>())
            .collect()
    }

    /// A seeded stream of doubles in [0, 1).
    fn uniform(state: &mut u64) -> f64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*state >> 11) as f64 / (1u64 << 53) as f64
    }

    #[test]
    fn a_step_is_the_dense_matrix_step() {
        let mut state = 7u64;
        for trial in 0..200 {
            let w = 1 + trial % 3;
            let k = 2 << w;
            let g = (2 + trial % 5) as f64;
            let exact = trial % 2 == 1;
            let x: Vec<f64> = (0..k)
                .map(|_| (uniform(&mut state) * 500.0).floor())
                .collect();
            let y: Vec<f64> = (0..k)
                .map(|_| (uniform(&mut state) * 500.0).floor())
                .collect();
            let mut q = Query::new(w, g, exact);
            q.step(&y, &x);
            let want = dense_step(&y, &x, g, exact);
            for (a, b) in q.new.iter().zip(&want) {
                assert!(
                    (a - b).abs() <= 1e-12 * b.abs().max(1.0),
                    "trial {trial}: {a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn noise_free_counts_are_a_fixed_point() {
        // y = Mᵀx: the first step returns x, so the count rule stops at once.
        let x = [50.0, 10.0, 30.0, 10.0, 20.0, 40.0, 25.0, 15.0];
        let m = dense(&x, 4.0, false);
        let y: Vec<f64> = (0..8)
            .map(|c| (0..8).map(|i| m[i][c] * x[i]).sum())
            .collect();
        let out = em_batch(&y, &x, 8, 4, false, Stopping::Count { tol: 1e-6 }, 100).unwrap();
        assert_eq!((out.iterations[0], out.converged[0]), (1, true));
        for (a, b) in out.x.iter().zip(&x) {
            assert!((a - b).abs() < 1e-9, "{:?}", out.x);
        }
    }

    #[test]
    fn empty_queries_stay_and_the_cap_is_reported() {
        let y = [0.0, 0.0, 0.0, 0.0, 900.0, 5.0, 80.0, 1.0];
        let start = [1.0, 2.0, 3.0, 4.0, 900.0, 5.0, 80.0, 1.0];
        let out = em_batch(&y, &start, 4, 5, false, Stopping::Paper { tol: 1e-15 }, 3).unwrap();
        assert_eq!(&out.x[..4], &start[..4]);
        assert_eq!(out.iterations, vec![0, 3]);
        assert_eq!(out.converged, vec![true, false]);
        // The result is the third step's x.
        let mut x = start[4..].to_vec();
        for _ in 0..3 {
            x = dense_step(&y[4..], &x, 5.0, false);
        }
        for (a, b) in out.x[4..].iter().zip(&x) {
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0));
        }
        let none = em_batch(&y, &start, 4, 5, false, Stopping::Paper { tol: 0.01 }, 0).unwrap();
        assert_eq!(
            (none.iterations, none.converged),
            (vec![0, 0], vec![true, false])
        );
    }

    #[test]
    fn the_count_rule_reports_the_extrapolated_limit() {
        // A requested count decaying geometrically to 0: the rule stops long before
        // the paper's (which never fires) at a limit within tol of 0.
        let y = [764.0, 729.0, 846.0, 175.0];
        let rule = |s| em_batch(&y, &y, 4, 2, false, s, 10_000).unwrap();
        let count = rule(Stopping::Count { tol: 1e-6 });
        let run_out = rule(Stopping::Paper { tol: 1e-300 });
        assert!(
            count.converged[0] && count.iterations[0] < 1_000,
            "{count:?}"
        );
        assert!(!run_out.converged[0] && run_out.iterations[0] == 10_000);
        assert!(
            (count.x[3] - run_out.x[3]).abs() < 1e-3,
            "{count:?} {run_out:?}"
        );
    }

    #[test]
    fn threads_do_not_change_the_result() {
        let mut state = 3u64;
        let y: Vec<f64> = (0..4 * 500)
            .map(|_| (uniform(&mut state) * 300.0).floor())
            .collect();
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| em_batch(&y, &y, 4, 5, true, Stopping::Count { tol: 1e-6 }, 5_000))
                .unwrap()
        };
        assert_eq!(run(1), run(2));
    }

    #[test]
    fn bad_input_is_an_error_naming_it() {
        let y = [1.0, 2.0, 3.0, 4.0];
        let count = Stopping::Count { tol: 1e-6 };
        let err = |r: Result<EmBatch, KernelError>| r.unwrap_err();
        let shape = |r, want: &str| assert!(message(err(r), "Shape").contains(want));
        shape(em_batch(&y, &y, 2, 5, false, count, 10), "power of two");
        shape(em_batch(&y, &y, 6, 5, false, count, 10), "power of two");
        shape(em_batch(&y, &y[..3], 4, 5, false, count, 10), "start 3");
        let param = |r, want: &str| {
            let msg = message(err(r), "Parameter");
            assert!(msg.contains(want), "{msg}");
        };
        param(em_batch(&y, &y, 4, 1, false, count, 10), "group_size");
        param(
            em_batch(&y, &y, 4, 5, false, Stopping::Paper { tol: 0.0 }, 10),
            "tol",
        );
        param(
            em_batch(&y, &y, 4, 5, false, Stopping::Count { tol: f64::NAN }, 10),
            "tol",
        );
        param(em_batch(&y, &y, 4, 5, false, count, -1), "max_iter");
        let bad = [1.0, 2.0, -3.0, 4.0, 1.0, 1.0, 1.0, f64::INFINITY];
        param(em_batch(&bad, &bad, 4, 5, false, count, 10), "y[0, 2] = -3");
        param(
            em_batch(&[1.0; 8], &bad[4..].repeat(2), 4, 5, false, count, 10),
            "start[0, 3] = inf",
        );
    }
}
