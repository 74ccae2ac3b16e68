//! The compact index: the published vectors both ways, a dense round trip
//! around every encoding-length boundary across the whole 32-bit range, and
//! rejection of encodings that are cut off or do not fit in 32 bits.

use zenpak::classic::CompactIndex;

/// Vectors from the issue and reference 003.
const VECTORS: &[(i32, &[u8])] = &[
    (0, &[0x00]),
    (1, &[0x01]),
    (100, &[0x64, 0x01]),
    (10_000, &[0x50, 0x9C, 0x01]),
    (10_000_000, &[0x40, 0xDA, 0xC4, 0x09]),
    (1_000_000_000, &[0x40, 0xA8, 0xD6, 0xB9, 0x07]),
    (-100, &[0xE4, 0x01]),
    // From CTF-Face (reference 003): name indices and object references.
    (182, &[0x76, 0x02]),
    (-120, &[0xF8, 0x01]),
    (-14, &[0x8E]),
    (19_691, &[0x6B, 0xB3, 0x02]),
    (i32::MAX, &[0x7F, 0xFF, 0xFF, 0xFF, 0x0F]),
    (i32::MIN, &[0xC0, 0x80, 0x80, 0x80, 0x10]),
];

#[test]
fn vectors_encode_and_decode() {
    for &(value, bytes) in VECTORS {
        assert_eq!(CompactIndex(value).to_bytes(), bytes, "encoding {value}");
        assert_eq!(
            CompactIndex::decode(bytes).unwrap(),
            (CompactIndex(value), bytes.len()),
            "decoding {bytes:02X?}"
        );
    }
}

fn round_trip(value: i32) {
    let bytes = CompactIndex(value).to_bytes();
    let expected_len = match value.unsigned_abs() {
        0..=0x3f => 1,
        0x40..=0x1fff => 2,
        0x2000..=0xf_ffff => 3,
        0x10_0000..=0x7ff_ffff => 4,
        _ => 5,
    };
    assert_eq!(bytes.len(), expected_len, "length of {value}");
    let (decoded, used) = CompactIndex::decode(&bytes).unwrap();
    assert_eq!(
        (decoded.0, used),
        (value, bytes.len()),
        "round trip of {value}"
    );
}

#[test]
fn exhaustive_round_trip_of_the_short_encodings() {
    // Every value of one to three bytes (|v| < 2^20), both signs.
    for value in -(1 << 20)..(1 << 20) {
        round_trip(value);
    }
}

#[test]
fn dense_round_trip_at_every_boundary_across_the_32_bit_range() {
    let mut tested = 0u64;
    // Around each length boundary (6, 13, 20, 27 bits) and every other power of two.
    for bit in 0..=31u32 {
        let edge = 1i64 << bit;
        for centre in [edge, -edge] {
            for delta in -4096i64..=4096 {
                if let Ok(value) = i32::try_from(centre + delta) {
                    round_trip(value);
                    tested += 1;
                }
            }
        }
    }
    // A stride across the whole range, so every region is visited too.
    let mut value = i32::MIN as i64;
    while value <= i32::MAX as i64 {
        round_trip(value as i32);
        tested += 1;
        value += 65_521; // prime, so the low bits vary
    }
    for value in [i32::MIN, i32::MIN + 1, -1, 0, 1, i32::MAX - 1, i32::MAX] {
        round_trip(value);
    }
    assert!(tested > 300_000);
}

#[test]
fn truncated_and_oversized_encodings_are_errors() {
    for bytes in [
        &[][..],
        &[0x40],
        &[0xC0, 0x80],
        &[0x40, 0x80, 0x80],
        &[0x40, 0x80, 0x80, 0x80],
    ] {
        let error = CompactIndex::decode(bytes).unwrap_err();
        assert_eq!(error.offset().unwrap(), 0, "{bytes:02X?}: {error}");
    }
    // 2^31 is only valid as a negative number; the fifth byte may not exceed 32 bits either.
    assert!(CompactIndex::decode(&[0x40, 0x80, 0x80, 0x80, 0x10]).is_err());
    assert!(CompactIndex::decode(&[0xC0, 0x80, 0x80, 0x80, 0x11]).is_err());
    assert!(CompactIndex::decode(&[0x7F, 0xFF, 0xFF, 0xFF, 0xFF]).is_err());
    // The fifth byte never continues: a sixth byte is not read.
    assert_eq!(
        CompactIndex::decode(&[0x41, 0x80, 0x80, 0x80, 0x00, 0xFF]).unwrap(),
        (CompactIndex(1), 5)
    );
}

/// Every one of the 2^32 values (about 5 minutes of CPU in release:
/// `cargo test --release --test classic classic_compact:: -- --ignored`).
#[test]
#[ignore = "slow: run in release with --ignored"]
fn exhaustive_round_trip_of_every_32_bit_value() {
    for value in i32::MIN..=i32::MAX {
        let (bytes, length) = CompactIndex(value).encode();
        let (decoded, used) = CompactIndex::decode(&bytes[..length]).unwrap();
        assert!(
            decoded.0 == value && used == length,
            "round trip of {value}"
        );
    }
}
