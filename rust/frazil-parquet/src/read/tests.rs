use super::*;

#[test]
fn footer_length_refuses_short_and_foreign_tails() {
    assert!(footer_length(b"PAR1").is_err());
    assert!(footer_length(b"\0\0\0\0XXXX").is_err());
    let e = footer_length(b"\x10\0\0\0PARE").unwrap_err();
    assert!(e.message.contains("encrypted"));
    assert_eq!(footer_length(b"\x10\0\0\0PAR1").unwrap(), 24);
}

#[test]
fn garbage_footer_is_an_error_not_a_panic() {
    let mut tail = vec![0xAB; 40];
    tail.extend_from_slice(&40u32.to_le_bytes());
    tail.extend_from_slice(MAGIC);
    assert!(Footer::parse(&tail, 48, None).is_err());
    // a footer longer than the bytes given
    let mut tail = vec![0u8; 4];
    tail.extend_from_slice(&1000u32.to_le_bytes());
    tail.extend_from_slice(MAGIC);
    assert!(Footer::parse(&tail, 12, None).is_err());
}

#[test]
fn ranges_serve_only_what_was_read() {
    let r = Ranges::new(100, vec![(10, Bytes::from_static(b"abcdef"))]);
    assert_eq!(&r.get_bytes(11, 3).unwrap()[..], b"bcd");
    assert!(r.get_bytes(14, 3).is_err());
    assert!(r.get_bytes(0, 1).is_err());
    assert!(r.get_read(50).is_err());
}
