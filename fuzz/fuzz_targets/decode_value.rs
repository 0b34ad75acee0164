//! Any bytes, decoded as a binary single value of every primitive type (Appendix D), and any
//! text as a JSON single value: a value or an error, never a panic.
#![no_main]

use frazil_values::{binary, json, PrimitiveType, Type};
use libfuzzer_sys::fuzz_target;

const TYPES: &[&str] = &[
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "decimal(9,2)",
    "decimal(38,10)",
    "date",
    "time",
    "timestamp",
    "timestamptz",
    "timestamp_ns",
    "timestamptz_ns",
    "string",
    "uuid",
    "fixed[4]",
    "binary",
];

fuzz_target!(|data: &[u8]| {
    for name in TYPES {
        let Ok(ty) = name.parse::<PrimitiveType>() else {
            continue;
        };
        if let Ok(value) = binary::from_bytes(data, &ty) {
            // whatever decodes must encode again
            assert!(binary::to_bytes(&value, &ty).is_ok(), "{name}");
        }
        if let Ok(text) = std::str::from_utf8(data) {
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
                let _ = json::from_json(&value, &Type::Primitive(ty));
            }
        }
    }
});
