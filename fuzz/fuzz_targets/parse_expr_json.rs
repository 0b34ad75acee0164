//! Any bytes, read as a bound expression's JSON (expressions spec, Appendix B) against a schema
//! with a column of every kind of literal: an expression or an error, never a panic, a stack
//! overflow (deep nesting) or memory past libFuzzer's limit. An expression that parses writes
//! back to JSON that parses to the same expression.
#![no_main]

use std::sync::OnceLock;

use frazil_scan::{Expr, Schema};
use libfuzzer_sys::fuzz_target;

fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        Schema::from_json(
            r#"{"type":"struct","fields":[
            {"id":1,"name":"id","required":true,"type":"int"},
            {"id":2,"name":"data","required":false,"type":"string"},
            {"id":3,"name":"f","required":false,"type":"float"},
            {"id":4,"name":"d","required":false,"type":"double"},
            {"id":5,"name":"l","required":false,"type":"long"},
            {"id":6,"name":"dec","required":false,"type":"decimal(9,2)"},
            {"id":7,"name":"b","required":false,"type":"binary"},
            {"id":8,"name":"ts","required":false,"type":"timestamptz"},
            {"id":9,"name":"u","required":false,"type":"uuid"},
            {"id":10,"name":"s","required":false,"type":{"type":"struct","fields":[
                {"id":11,"name":"x","required":false,"type":"date"}]}}]}"#,
        )
        .expect("the fuzz schema parses")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let schema = schema();
    let Ok(expr) = Expr::from_json_str(text, schema) else {
        return;
    };
    if let Ok(json) = expr.to_json(schema) {
        let again = Expr::from_json(&json, schema).expect("written JSON parses");
        assert_eq!(again.to_json(schema).ok(), Some(json));
    }
});
