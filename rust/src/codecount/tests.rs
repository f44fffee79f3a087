//! The pass against a brute-force reference: each code's digits by plain
//! division, looked up in the table.

use super::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Rows whose digits (c div stride_j mod r_j, by plain u128 arithmetic) of the
/// `read` attributes index a true cell of `table`.
fn reference(codes: &[u64], radices: &[u64], read: &[usize], table: &[bool]) -> u64 {
    codes
        .iter()
        .filter(|&&c| {
            let index = read.iter().fold(0u128, |acc, &j| {
                let stride = product(&radices[j + 1..]);
                acc * u128::from(radices[j]) + (u128::from(c) / stride) % u128::from(radices[j])
            });
            table[index as usize]
        })
        .count() as u64
}

/// Random radices, a random subset read, a random table and random codes
/// below m (and the codes m − 1 and 0), checked against `reference`.
fn check_drawn(rng: &mut ChaCha8Rng, radices: &[u64], n: usize) {
    let k = radices.len();
    let m = product(radices);
    for _ in 0..8 {
        let read: Vec<usize> = (0..k).filter(|_| rng.random_bool(0.4)).collect();
        let cells = read.iter().map(|&j| radices[j] as usize).product::<usize>();
        if cells > 1 << 12 {
            continue; // (the reference is slow in a debug build)
        }
        let density = rng.random_range(0.05..0.95);
        let table: Vec<bool> = (0..cells).map(|_| rng.random_bool(density)).collect();
        let mut codes: Vec<u64> = (0..n).map(|_| (rng.random::<u128>() % m) as u64).collect();
        codes.push((m - 1) as u64);
        codes.push(0);
        let got = count_codes_in_table(&codes, radices, &read, &table).unwrap();
        assert_eq!(
            got,
            reference(&codes, radices, &read, &table),
            "radices {radices:?} read {read:?}"
        );
    }
}

#[test]
fn equals_the_reference_on_drawn_domains_narrow_and_wide() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    // Adult's radices (m < 2^32: the 32-bit path), a chunk and a block edge past.
    check_drawn(
        &mut rng,
        &[72, 7, 16, 7, 14, 5, 2, 41, 2],
        CHUNK + BLOCK + 3,
    );
    for _ in 0..30 {
        let k = rng.random_range(1..8);
        let radices: Vec<u64> = (0..k)
            .map(|_| match rng.random_range(0..4) {
                0 => 1,
                1 => rng.random_range(2..5),
                2 => rng.random_range(100..300), // past 127 and 255 values
                _ => rng.random_range(2..70_000),
            })
            .collect();
        if product(&radices) <= 1u128 << 64 {
            check_drawn(&mut rng, &radices, 1500);
        }
    }
}

#[test]
fn codes_near_2_64_and_radix_1_attributes() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    // m = 2^64 exactly, just below it, just past 2^32 (the 64-bit path) and
    // exactly 2^32; radix-1 attributes around read ones.
    for radices in [
        vec![65_536, 65_536, 65_536, 65_536],
        vec![1 << 16, 3, 1 << 14, 1 << 31],
        vec![4_294_967_291, 4_294_967_279],
        vec![2, 1 << 31, 1],
        vec![1, 1 << 32],
        vec![1, 1 << 20, 1, 3, 1],
    ] {
        check_drawn(&mut rng, &radices, 2000);
    }
    // The top code of a 2^64 domain; a read attribute of one value whose stride is 2^64.
    let codes = [u64::MAX, 0, 1 << 32, (1 << 32) - 1];
    let table: Vec<bool> = (0..1u64 << 16).map(|i| i % 3 == 0).collect();
    let radices = [1u64 << 48, 1 << 16];
    assert_eq!(
        count_codes_in_table(&codes, &radices, &[1], &table).unwrap(),
        reference(&codes, &radices, &[1], &table)
    );
    let radices = [1u64, 1 << 32, 1 << 32];
    assert_eq!(
        count_codes_in_table(&codes, &radices, &[0], &[true]).unwrap(),
        4
    );
    assert_eq!(
        count_codes_in_table(&codes, &radices, &[], &[false]).unwrap(),
        0
    );
}

#[test]
fn gaps_are_merged_while_the_table_stays_small() {
    let radices = [72, 7, 16, 7, 14, 5, 2, 41, 2];
    // occupation (4) and sex (6): merged over race; age (0) and salary (8): not.
    assert_eq!(
        merged_runs(&radices, &[4, 6]),
        vec![Run { first: 4, last: 6 }]
    );
    assert_eq!(
        merged_runs(&radices, &[0, 8]),
        vec![Run { first: 0, last: 0 }, Run { first: 8, last: 8 }]
    );
    let table = [true, false, false, true]; // (sex, salary) equal
    let spread = spread_table(&radices, &[6, 8], &[Run { first: 6, last: 8 }], &table);
    assert_eq!(spread.len(), 2 * 41 * 2);
    assert_eq!(spread[41 * 2 + 5 * 2 + 1], 1); // sex 1, country 5, salary 1
    assert_eq!(spread[5 * 2 + 1], 0); // sex 0, country 5, salary 1
}

#[test]
fn bad_codes_and_arguments_are_named() {
    let radices = [3u64, 4];
    let table = [true; 4];
    assert_eq!(
        count_codes_in_table(&[0, 11, 12], &radices, &[1], &table),
        Err(KernelError::InvalidCode { row: 2 })
    );
    let mut codes = vec![0u64; CHUNK + 5];
    codes[CHUNK + 3] = u64::MAX;
    assert_eq!(
        count_codes_in_table(&codes, &radices, &[1], &table),
        Err(KernelError::InvalidCode { row: CHUNK + 3 })
    );
    let msg = |e: KernelError| e.to_string();
    assert_eq!(
        msg(count_codes_in_table(&[0], &radices, &[1, 0], &[true; 12]).unwrap_err()),
        "shape mismatch: read attributes must increase, got 1 then 0"
    );
    assert_eq!(
        msg(count_codes_in_table(&[0], &radices, &[2], &[true; 4]).unwrap_err()),
        "shape mismatch: read attribute 2 of 2 attributes"
    );
    assert_eq!(
        msg(count_codes_in_table(&[0], &radices, &[0], &[true; 4]).unwrap_err()),
        "shape mismatch: table of 4 cells for read attributes of 3 cells"
    );
    assert!(
        msg(count_codes_in_table(&[0], &[1 << 40, 1 << 30], &[0], &[true]).unwrap_err())
            .contains("exceeds 2^64")
    );
    assert!(
        msg(count_codes_in_table(&[0], &[0, 3], &[1], &[true; 3]).unwrap_err())
            .contains("radix of attribute 0 is 0")
    );
}
