use super::check::check_stated_len;
use super::*;

#[test]
fn fields_read_and_write_big_endian() {
    let mut b = [0u8; 12];
    set::<u8>(&mut b, 0, 0x12);
    set::<u16>(&mut b, 1..3, 0x3456);
    set::<u32>(&mut b, 3..7, 0x789a_bcde);
    set::<[u8; 6]>(&mut b, 6, [1, 2, 3, 4, 5, 6]);
    assert_eq!(b, [0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 1, 2, 3, 4, 5, 6]);
    assert_eq!(get::<u8>(&b, 0), 0x12);
    assert_eq!(get::<u16>(&b, 1..3), 0x3456);
    assert_eq!(get::<u32>(&b, 2), 0x5678_9abc);
    assert_eq!(get::<[u8; 6]>(&b, 6..12), [1, 2, 3, 4, 5, 6]);
}

#[test]
fn fields_out_of_range_read_zero_and_write_nothing() {
    let mut b = [0xffu8; 3];
    assert_eq!(get::<u8>(&b, 3), 0);
    assert_eq!(get::<u16>(&b, 2), 0);
    assert_eq!(get::<u32>(&b, 0), 0);
    assert_eq!(get::<[u8; 6]>(&b, 0), [0; 6]);
    assert_eq!(get::<u16>(&b, usize::MAX - 1), 0);
    set::<u16>(&mut b, 2, 0);
    set::<u32>(&mut b, 0, 0);
    set::<[u8; 6]>(&mut b, 0, [0; 6]);
    assert_eq!(b, [0xff; 3]);
}

#[test]
fn stated_len() {
    assert_eq!(check_stated_len(7, 8, || 8), Err(WireError::Truncated));
    assert_eq!(check_stated_len(8, 8, || 7), Err(WireError::BadHeaderLen));
    assert_eq!(check_stated_len(8, 8, || 9), Err(WireError::Truncated));
    assert_eq!(check_stated_len(9, 8, || 9), Ok(()));
}

#[test]
fn u128_fields() {
    let mut b = [0u8; 18];
    let a = 0x2001_0db8_0000_0000_0000_0000_c0a8_0105u128;
    set::<u128>(&mut b, 1..17, a);
    assert_eq!(&b[1..17], &a.to_be_bytes());
    assert_eq!((b[0], b[17]), (0, 0));
    assert_eq!(get::<u128>(&b, 1), a);
    assert_eq!(get::<u128>(&b, 3), 0);
    set::<u128>(&mut b, 3, u128::MAX);
    assert_eq!(&b[1..17], &a.to_be_bytes());
}
