//! Tails of sums of independent binomials, many problems at once: the ragged
//! part of `privpub.tables.confidence.sum_tails` (the confidence intervals'
//! test inversion calls it at every probe of its searches).
//!
//! For each problem the caller (Python, with SciPy's special functions) gives
//! the summands' windows — first value, length and log-pmf at the first value
//! of every summand but the last — and, for the last summand B (the one of
//! largest variance), its log-pmf at the anchor and its upper tail
//! S = P(B ≥ top) at top = k − (sum of the windows' first values). Here:
//!
//! - each window's pmf by the ratio recurrence P(j)/P(j − 1) = (n − j + 1)/j ·
//!   p/(1 − p), summed in logs from the first value and exponentiated;
//! - the windows convolved directly, in order (sums of non-negative terms:
//!   each value's relative rounding error is at most its term count times the
//!   unit roundoff);
//! - B's pmf at x = top, top − 1, … by P(x)/P(x + 1) = (x + 1)/(n − x) ·
//!   (1 − p)/p from the anchor, and S(top − j) = S(top) + Σ_{j' = 1..j}
//!   P(B = top − j');
//! - `upper` = Σ_j pmf(j)·S(k − j) and `above` = Σ_j pmf(j)·S(k + 1 − j).
//!
//! The recurrences, in the same operations and order per problem, are the
//! ones the numpy version computed (it kept one running sum over all the
//! problems' windows, whose rounding grew with the batch; here each problem
//! has its own); the rounding margin the Python layer adds over the result
//! (`_ROUNDING`) is what makes the tails upper bounds. No rounding is traded
//! for speed: the convolution is direct, not by FFT.

use crate::error::KernelError;
use rayon::prelude::*;

/// The longest window, or convolution of windows, a problem may have: a
/// binomial's 12 standard deviations reach this at about 10^13 trials.
pub const MAX_WINDOW: i64 = 1 << 26;

/// The windowed summands of every problem: (W, P) arrays, row w the w-th
/// summand's window of each problem.
pub struct Windows<'a> {
    pub first: &'a [f64],
    pub length: &'a [i64],
    pub log_first: &'a [f64],
    pub trials: &'a [f64],
    pub prob: &'a [f64],
}

/// The last summand B of every problem: (P,) arrays.
pub struct Last<'a> {
    /// k minus the sum of the windows' first values: where S is anchored.
    pub top: &'a [f64],
    pub trials: &'a [f64],
    pub prob: &'a [f64],
    /// log P(B = clip(top, 0, trials)) (ignored when prob is 0 or 1).
    pub log_anchor: &'a [f64],
    /// P(B ≥ top).
    pub tail: &'a [f64],
}

/// Per thread: the convolved pmf, one window's pmf, B's pmf.
#[derive(Default)]
struct Scratch {
    pmf: Vec<f64>,
    window: Vec<f64>,
    last: Vec<f64>,
}

/// (upper, above) of every problem: Σ_j pmf(j)·S(k − j) and Σ_j pmf(j)·S(k +
/// 1 − j), pmf the windows' convolution (module docs). `Shape` when the arrays
/// disagree in length, `Parameter` naming the argument, summand and problem
/// when a window's length, a count or a probability is out of range.
pub fn window_tails(
    problems: usize,
    windows: &Windows<'_>,
    last: &Last<'_>,
) -> Result<(Vec<f64>, Vec<f64>), KernelError> {
    let count = check(problems, windows, last)?;
    let out: Vec<(f64, f64)> = (0..problems)
        .into_par_iter()
        .map_init(Scratch::default, |scratch, i| {
            problem(i, problems, count, windows, last, scratch)
        })
        .collect();
    Ok(out.into_iter().unzip())
}

/// The windowed summands' count W; every argument checked.
fn check(problems: usize, w: &Windows<'_>, last: &Last<'_>) -> Result<usize, KernelError> {
    let n = w.first.len();
    if problems == 0 {
        return Ok(0);
    }
    if n % problems != 0 {
        return Err(KernelError::Shape(format!(
            "window arrays of {n} values for {problems} problems"
        )));
    }
    for (name, len) in [
        ("length", w.length.len()),
        ("log_first", w.log_first.len()),
        ("trials", w.trials.len()),
        ("prob", w.prob.len()),
    ] {
        if len != n {
            return Err(KernelError::Shape(format!(
                "window {name} has {len} values, first has {n}"
            )));
        }
    }
    for (name, len) in [
        ("top", last.top.len()),
        ("trials", last.trials.len()),
        ("prob", last.prob.len()),
        ("log_anchor", last.log_anchor.len()),
        ("tail", last.tail.len()),
    ] {
        if len != problems {
            return Err(KernelError::Shape(format!(
                "last summand's {name} has {len} values for {problems} problems"
            )));
        }
    }
    let count = n / problems;
    for i in 0..problems {
        let mut total: i64 = 0;
        for s in 0..count {
            let at = s * problems + i;
            let len = w.length[at];
            if !(1..=MAX_WINDOW).contains(&len) {
                return Err(KernelError::Parameter(format!(
                    "window length {len} of summand {s}, problem {i}: must be in 1..={MAX_WINDOW}"
                )));
            }
            total += len - 1;
            if total >= MAX_WINDOW {
                return Err(KernelError::Parameter(format!(
                    "the windows of problem {i} convolve to more than {MAX_WINDOW} values"
                )));
            }
            check_binomial("window", s, i, w.trials[at], w.prob[at])?;
            if !w.first[at].is_finite() {
                return Err(KernelError::Parameter(format!(
                    "window first {} of summand {s}, problem {i} is not finite",
                    w.first[at]
                )));
            }
        }
        check_binomial("last summand", count, i, last.trials[i], last.prob[i])?;
        if !last.top[i].is_finite() {
            return Err(KernelError::Parameter(format!(
                "last summand's top {} of problem {i} is not finite",
                last.top[i]
            )));
        }
    }
    Ok(count)
}

fn check_binomial(what: &str, s: usize, i: usize, n: f64, p: f64) -> Result<(), KernelError> {
    if !(n >= 0.0 && n.is_finite()) {
        return Err(KernelError::Parameter(format!(
            "{what} trials {n} of summand {s}, problem {i}: must be a finite count ≥ 0"
        )));
    }
    if !(0.0..=1.0).contains(&p) {
        return Err(KernelError::Parameter(format!(
            "{what} probability {p} of summand {s}, problem {i}: must be in [0, 1]"
        )));
    }
    Ok(())
}

/// One problem's (upper, above).
fn problem(
    i: usize,
    problems: usize,
    count: usize,
    w: &Windows<'_>,
    last: &Last<'_>,
    scratch: &mut Scratch,
) -> (f64, f64) {
    let Scratch {
        pmf,
        window,
        last: pmf_b,
    } = scratch;
    window_pmf(w, i, pmf);
    for s in 1..count {
        window_pmf(w, s * problems + i, window);
        convolve(pmf, window);
    }
    tail_pmf(last, i, pmf.len(), pmf_b);
    // S(top − j) = S(top) + Σ_{j' = 1..j} P(B = top − j'), clipped to [0, 1].
    let mut running = last.tail[i];
    let (mut upper, mut above) = (0.0, 0.0);
    for (j, (&mass, &at)) in pmf.iter().zip(pmf_b.iter()).enumerate() {
        if j > 0 {
            running += at;
        }
        let s_at = running.clamp(0.0, 1.0);
        upper += mass * s_at;
        above += mass * (s_at - at).clamp(0.0, 1.0);
    }
    (upper, above)
}

/// P(Bin(n, p) = first + j), j < length, of window `at` into `out`.
fn window_pmf(w: &Windows<'_>, at: usize, out: &mut Vec<f64>) {
    let (first, n, p) = (w.first[at], w.trials[at], w.prob[at]);
    // Checked: 1 ≤ length ≤ MAX_WINDOW.
    let length = w.length[at] as usize;
    let odds = p / (1.0 - p);
    let ratio = |j: usize| {
        let x = first + j as f64;
        (n - x + 1.0) / x * odds
    };
    recurrence(w.log_first[at], length, ratio, out);
}

/// `out[j]` = exp(`log_start`)·Π_{j' = 1..j} `ratio(j')`, j < `length`: a pmf
/// from its first value by the ratios of neighbours. The product runs in
/// floats (three roundings a step, against the log form's error of a step
/// times the running log's size) while the start is a normal float, so
/// every value is within 2^1023 of it (each is a probability ≤ 1); from a
/// start below that, in logs, one exp per value (values that small add
/// nothing a tail can see, but they are still computed, not dropped).
fn recurrence(log_start: f64, length: usize, ratio: impl Fn(usize) -> f64, out: &mut Vec<f64>) {
    out.clear();
    out.reserve(length);
    let start = log_start.exp();
    if start >= f64::MIN_POSITIVE {
        let mut value = start;
        out.push(value);
        for j in 1..length {
            value *= ratio(j);
            out.push(value);
        }
    } else {
        let mut log = log_start;
        out.push(start);
        for j in 1..length {
            log += ratio(j).ln();
            out.push(log.exp());
        }
    }
}

/// `pmf` convolved with `other` in place (direct: non-negative sums).
fn convolve(pmf: &mut Vec<f64>, other: &[f64]) {
    let (a, b) = (pmf.len(), other.len());
    let mut out = vec![0.0; a + b - 1];
    let (short, long) = if a <= b {
        (&pmf[..], other)
    } else {
        (other, &pmf[..])
    };
    for (s, &x) in short.iter().enumerate() {
        for (o, &y) in out[s..s + long.len()].iter_mut().zip(long) {
            *o += x * y;
        }
    }
    *pmf = out;
}

/// P(B = top − j), j < length, into `out` (0 outside [0, n]; module docs).
fn tail_pmf(last: &Last<'_>, i: usize, length: usize, out: &mut Vec<f64>) {
    let (top, n, p) = (last.top[i], last.trials[i], last.prob[i]);
    out.clear();
    out.reserve(length);
    if p <= 0.0 || p >= 1.0 {
        let point = n * p;
        out.extend((0..length).map(|j| f64::from(u8::from(top - j as f64 == point))));
        return;
    }
    if top < 0.0 {
        out.resize(length, 0.0);
        return;
    }
    // Values above n are 0; from the anchor (the largest x within [0, n]) down
    // by the ratios, until x passes below 0.
    let anchor = top.clamp(0.0, n);
    let above = ((top - anchor) as usize).min(length);
    out.resize(above, 0.0);
    let inside = (anchor + 1.0).min((length - above) as f64) as usize;
    let odds = (1.0 - p) / p;
    let ratio = |j: usize| {
        let x = anchor - j as f64;
        (x + 1.0) / (n - x) * odds
    };
    let mut run = Vec::new();
    recurrence(last.log_anchor[i], inside, ratio, &mut run);
    out.extend_from_slice(&run);
    out.resize(length, 0.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pmf(n: u64, p: f64) -> Vec<f64> {
        let mut out = vec![1.0];
        for _ in 0..n {
            let mut next = vec![0.0; out.len() + 1];
            for (j, &v) in out.iter().enumerate() {
                next[j] += v * (1.0 - p);
                next[j + 1] += v * p;
            }
            out = next;
        }
        out
    }

    #[test]
    fn whole_windows_give_the_exact_tails() {
        // Bin(5, 0.3) + Bin(7, 0.6), the first wholly windowed, at k = 6.
        let (p1, p2, k) = (0.3, 0.6, 6usize);
        let (a, b) = (pmf(5, p1), pmf(7, p2));
        let first = [0.0];
        let length = [6i64];
        let log_first = [a[0].ln()];
        let windows = Windows {
            first: &first,
            length: &length,
            log_first: &log_first,
            trials: &[5.0],
            prob: &[p1],
        };
        let tail: f64 = b[k..].iter().sum();
        let last = Last {
            top: &[k as f64],
            trials: &[7.0],
            prob: &[p2],
            log_anchor: &[b[k].ln()],
            tail: &[tail],
        };
        let (upper, above) = window_tails(1, &windows, &last).unwrap();
        let mut ge = [0.0; 2];
        for (x, &pa) in a.iter().enumerate() {
            for (y, &pb) in b.iter().enumerate() {
                for (slot, kk) in ge.iter_mut().zip([k, k + 1]) {
                    if x + y >= kk {
                        *slot += pa * pb;
                    }
                }
            }
        }
        assert!((upper[0] - ge[0]).abs() < 1e-14, "{} {}", upper[0], ge[0]);
        assert!((above[0] - ge[1]).abs() < 1e-14, "{} {}", above[0], ge[1]);
    }

    #[test]
    fn bad_arguments_are_errors_naming_them() {
        let windows = Windows {
            first: &[0.0],
            length: &[0],
            log_first: &[0.0],
            trials: &[5.0],
            prob: &[0.5],
        };
        let last = Last {
            top: &[1.0],
            trials: &[3.0],
            prob: &[1.5],
            log_anchor: &[0.0],
            tail: &[0.5],
        };
        let err = window_tails(1, &windows, &last).unwrap_err();
        assert!(err.to_string().contains("window length 0"), "{err}");
        let ok = Windows {
            length: &[2],
            ..windows
        };
        let err = window_tails(1, &ok, &last).unwrap_err();
        assert!(
            err.to_string().contains("last summand probability 1.5"),
            "{err}"
        );
        let err = window_tails(2, &ok, &last).unwrap_err();
        assert!(matches!(err, KernelError::Shape(_)), "{err}");
    }
}
