//! Projection tests: inclusive and strict projection per transform, against the spec's rules
//! and Java's `Projections`.

use super::*;
use frazil_values::temporal::MICROS_PER_HOUR;

fn field(t: &str) -> PartitionField {
    PartitionField {
        source_id: 1,
        field_id: 1000,
        name: "p".into(),
        transform: Transform::parse(t).unwrap(),
    }
}

fn ty(s: &str) -> PrimitiveType {
    s.parse().unwrap()
}

fn proj(
    t: &str,
    src: &str,
    op: Op,
    lits: Vec<Literal>,
    strict: bool,
) -> Option<(Op, Vec<Literal>)> {
    project_predicate(&Predicate::new(1, op, lits), &field(t), &ty(src), strict)
        .map(|p| (p.op, p.literals))
}

fn i(v: i32) -> Literal {
    Literal::Int(v)
}

#[test]
fn identity_passes_through() {
    for strict in [false, true] {
        for op in [Op::Lt, Op::NotEq, Op::Eq, Op::GtEq] {
            assert_eq!(
                proj("identity", "int", op, vec![i(5)], strict),
                Some((op, vec![i(5)]))
            );
        }
        assert_eq!(
            proj("identity", "double", Op::IsNaN, vec![], strict),
            Some((Op::IsNaN, vec![]))
        );
    }
}

#[test]
fn bucket() {
    // bucket[16] of 34 is 3 for int and long alike (spec Appendix B: hash 2017239379)
    let b = Transform::Bucket(16)
        .apply_literal(Some(&Literal::Long(34)), &ty("long"))
        .unwrap()
        .unwrap();
    assert_eq!(
        proj("bucket[16]", "long", Op::Eq, vec![Literal::Long(34)], false),
        Some((Op::Eq, vec![b.clone()]))
    );
    assert_eq!(
        proj("bucket[16]", "long", Op::Eq, vec![Literal::Long(34)], true),
        None
    );
    assert_eq!(
        proj(
            "bucket[16]",
            "long",
            Op::NotEq,
            vec![Literal::Long(34)],
            true
        ),
        Some((Op::NotEq, vec![b]))
    );
    for op in [Op::Lt, Op::LtEq, Op::Gt, Op::GtEq, Op::NotEq, Op::NotIn] {
        assert_eq!(
            proj("bucket[16]", "long", op, vec![Literal::Long(34)], false),
            None
        );
    }
    // IN: the buckets of the values, de-duplicated (a set of one is an equality)
    let vals: Vec<Literal> = (0..40).map(Literal::Long).collect();
    let (op, lits) = proj("bucket[4]", "long", Op::In, vals, false).unwrap();
    assert_eq!(op, Op::In);
    assert_eq!(lits, vec![i(0), i(1), i(2), i(3)]);
    assert_eq!(
        proj(
            "bucket[4]",
            "long",
            Op::NotIn,
            vec![Literal::Long(1), Literal::Long(2)],
            false
        ),
        None
    );
    assert_eq!(
        proj("bucket[16]", "long", Op::IsNull, vec![], false),
        Some((Op::IsNull, vec![]))
    );
}

#[test]
fn truncate_integers() {
    // inclusive: ranges are closed before truncating
    let cases = [
        (Op::Lt, 100, Some((Op::LtEq, 90))),
        (Op::LtEq, 100, Some((Op::LtEq, 100))),
        (Op::Gt, 100, Some((Op::GtEq, 100))),
        (Op::GtEq, 99, Some((Op::GtEq, 90))),
        (Op::Eq, -1, Some((Op::Eq, -10))),
        (Op::Lt, -10, Some((Op::LtEq, -20))),
        (Op::Gt, -1, Some((Op::GtEq, 0))),
        (Op::NotEq, 5, None),
    ];
    for (op, v, want) in cases {
        assert_eq!(
            proj("truncate[10]", "int", op, vec![i(v)], false),
            want.map(|(o, x)| (o, vec![i(x)])),
            "{op:?} {v}"
        );
    }
    let strict = [
        (Op::Lt, 100, Some((Op::Lt, 100))),
        (Op::LtEq, 100, Some((Op::Lt, 100))),
        (Op::LtEq, 99, Some((Op::Lt, 100))),
        (Op::Gt, 100, Some((Op::Gt, 100))),
        (Op::GtEq, 100, Some((Op::Gt, 90))),
        (Op::NotEq, -5, Some((Op::NotEq, -10))),
        (Op::Eq, 5, None),
    ];
    for (op, v, want) in strict {
        assert_eq!(
            proj("truncate[10]", "int", op, vec![i(v)], true),
            want.map(|(o, x)| (o, vec![i(x)])),
            "strict {op:?} {v}"
        );
    }
    // decimals: width in units of the scale; 10.65 < x projects to >= 10.50 (w=50)
    assert_eq!(
        proj(
            "truncate[50]",
            "decimal(9,2)",
            Op::Gt,
            vec![Literal::Decimal(1065)],
            false
        ),
        Some((Op::GtEq, vec![Literal::Decimal(1050)]))
    );
    assert_eq!(
        proj(
            "truncate[10]",
            "decimal(9,2)",
            Op::Lt,
            vec![Literal::Decimal(-100)],
            false
        ),
        Some((Op::LtEq, vec![Literal::Decimal(-110)]))
    );
    // long boundaries wrap as Java's do and stay safe
    assert_eq!(
        proj(
            "truncate[10]",
            "long",
            Op::Gt,
            vec![Literal::Long(i64::MAX)],
            false
        )
        .map(|p| p.0),
        Some(Op::GtEq)
    );
}

#[test]
fn truncate_strings() {
    let s = |v: &str| Literal::String(v.into());
    let cases = [
        (Op::StartsWith, "ab", false, Some((Op::StartsWith, "ab"))),
        (Op::StartsWith, "abc", false, Some((Op::Eq, "abc"))),
        (Op::StartsWith, "abcd", false, Some((Op::StartsWith, "abc"))),
        (Op::StartsWith, "abcd", true, None),
        (Op::StartsWith, "abc", true, Some((Op::Eq, "abc"))),
        (
            Op::NotStartsWith,
            "ab",
            false,
            Some((Op::NotStartsWith, "ab")),
        ),
        (Op::NotStartsWith, "abc", false, Some((Op::NotEq, "abc"))),
        (Op::NotStartsWith, "abcd", false, None),
        (
            Op::NotStartsWith,
            "abcd",
            true,
            Some((Op::NotStartsWith, "abc")),
        ),
        (Op::Lt, "abcd", false, Some((Op::LtEq, "abc"))),
        (Op::Gt, "abcd", false, Some((Op::GtEq, "abc"))),
        (Op::Eq, "abcd", false, Some((Op::Eq, "abc"))),
        (Op::Eq, "abcd", true, None),
        (Op::LtEq, "abcd", true, Some((Op::Lt, "abc"))),
        (Op::GtEq, "abcd", true, Some((Op::Gt, "abc"))),
        (Op::NotEq, "abcd", true, Some((Op::NotEq, "abc"))),
        // widths count code points, not UTF-16 units: two emoji are a prefix of width 3
        (
            Op::StartsWith,
            "😀😀",
            false,
            Some((Op::StartsWith, "😀😀")),
        ),
        (
            Op::StartsWith,
            "😀😀😀😀",
            false,
            Some((Op::StartsWith, "😀😀😀")),
        ),
        (
            Op::StartsWith,
            "\u{10FFFF}\u{10FFFF}\u{10FFFF}",
            true,
            Some((Op::Eq, "\u{10FFFF}\u{10FFFF}\u{10FFFF}")),
        ),
    ];
    for (op, v, strict, want) in cases {
        assert_eq!(
            proj("truncate[3]", "string", op, vec![s(v)], strict),
            want.map(|(o, x)| (o, vec![s(x)])),
            "{op:?} {v} strict={strict}"
        );
    }
    let b = |v: &[u8]| Literal::Binary(v.to_vec());
    assert_eq!(
        proj("truncate[2]", "binary", Op::Lt, vec![b(&[1, 2, 3])], false),
        Some((Op::LtEq, vec![b(&[1, 2])]))
    );
    assert_eq!(
        proj(
            "truncate[2]",
            "binary",
            Op::In,
            vec![b(&[1, 2, 3]), b(&[1, 2, 4])],
            false
        ),
        Some((Op::Eq, vec![b(&[1, 2])]))
    );
}

#[test]
fn time_transforms_before_the_epoch() {
    let d = Literal::Date;
    // day(date) is exact: no fix
    assert_eq!(
        proj("day", "date", Op::Eq, vec![d(-5)], false),
        Some((Op::Eq, vec![d(-5)]))
    );
    // month(1969-12-31) = -1: old writers said 0, so both are admitted
    assert_eq!(
        proj("month", "date", Op::Eq, vec![d(-1)], false),
        Some((Op::In, vec![i(-1), i(0)]))
    );
    assert_eq!(
        proj("year", "date", Op::Lt, vec![d(-365)], false),
        Some((Op::LtEq, vec![i(-1)])) // <= year(-366) = -2, fixed to -1
    );
    assert_eq!(proj("month", "date", Op::NotEq, vec![d(-1)], false), None);
    // timestamps: every transform is fixed, day included
    let ts = Literal::Timestamp;
    assert_eq!(
        proj("day", "timestamp", Op::Eq, vec![ts(-1)], false),
        Some((Op::In, vec![d(-1), d(0)]))
    );
    assert_eq!(
        proj(
            "hour",
            "timestamp",
            Op::Lt,
            vec![ts(-MICROS_PER_HOUR)],
            false
        ),
        Some((Op::LtEq, vec![i(-1)])) // <= hour(-1h - 1us) = -2, fixed to -1
    );
    assert_eq!(
        proj(
            "hour",
            "timestamp",
            Op::GtEq,
            vec![ts(-MICROS_PER_HOUR)],
            false
        ),
        Some((Op::GtEq, vec![i(-1)]))
    );
    // strict: gt/gt-eq at or below zero move up one
    assert_eq!(
        proj(
            "hour",
            "timestamp",
            Op::GtEq,
            vec![ts(-MICROS_PER_HOUR)],
            true
        ),
        Some((Op::Gt, vec![i(-1)])) // > hour(-1h - 1us) = -2, fixed to -1
    );
    assert_eq!(
        proj("day", "timestamp", Op::NotEq, vec![ts(-1)], true),
        Some((Op::NotIn, vec![d(-1), d(0)]))
    );
    assert_eq!(proj("day", "timestamp", Op::Eq, vec![ts(5)], true), None);
    // ranges after the epoch
    let micros_day = frazil_values::temporal::MICROS_PER_DAY;
    assert_eq!(
        proj("day", "timestamp", Op::Gt, vec![ts(micros_day)], false),
        Some((Op::GtEq, vec![d(1)]))
    );
    assert_eq!(
        proj("day", "timestamp", Op::Lt, vec![ts(micros_day)], false),
        Some((Op::LtEq, vec![d(0)]))
    );
    assert_eq!(
        proj("day", "timestamp", Op::Lt, vec![ts(micros_day)], true),
        Some((Op::Lt, vec![d(1)]))
    );
    assert_eq!(
        proj("day", "timestamp", Op::LtEq, vec![ts(micros_day - 1)], true),
        Some((Op::Lt, vec![d(1)]))
    );
    // IN over timestamps, with a pre-epoch value
    assert_eq!(
        proj(
            "day",
            "timestamp",
            Op::In,
            vec![ts(-1), ts(micros_day)],
            false
        ),
        Some((Op::In, vec![d(-1), d(0), d(1)]))
    );
    // nanosecond timestamps
    assert_eq!(
        proj(
            "day",
            "timestamp_ns",
            Op::GtEq,
            vec![Literal::TimestampNs(86_400_000_000_000)],
            false
        ),
        Some((Op::GtEq, vec![d(1)]))
    );
}

#[test]
fn void_and_unknown_project_to_nothing() {
    assert_eq!(proj("void", "int", Op::Eq, vec![i(1)], false), None);
    let unknown = PartitionField {
        source_id: 1,
        field_id: 1000,
        name: "z".into(),
        transform: Transform::parse_lenient("zorder").unwrap(),
    };
    assert_eq!(
        project_predicate(
            &Predicate::new(1, Op::Eq, vec![i(1)]),
            &unknown,
            &ty("int"),
            false
        ),
        None
    );
}

#[test]
fn whole_expressions() {
    let schema = Schema::from_json(
        r#"{"type":"struct","fields":[{"id":1,"name":"ts","required":true,"type":"timestamp"},
        {"id":2,"name":"id","required":false,"type":"long"}]}"#,
    )
    .unwrap();
    let spec = PartitionSpec::from_json(&serde_json::json!({"spec-id":0,"fields":[
        {"source-id":1,"field-id":1000,"name":"d","transform":"day"},
        {"source-id":1,"field-id":1001,"name":"h","transform":"hour"},
        {"source-id":2,"field-id":1002,"name":"b","transform":"bucket[4]"}]}))
    .unwrap();
    let day = frazil_values::temporal::MICROS_PER_DAY;
    // ts is required here; on an optional column NOT (ts < X) also holds for null (the spec's
    // 2-valued NOT), so the partitions of null timestamps stay
    let optional = Schema::from_json(
        r#"{"type":"struct","fields":[{"id":1,"name":"ts","required":false,"type":"timestamp"},
        {"id":2,"name":"id","required":false,"type":"long"}]}"#,
    )
    .unwrap();
    let not_lt = Expr::Not(Box::new(Expr::Pred(Predicate::new(
        1,
        Op::Lt,
        vec![Literal::Timestamp(day)],
    ))));
    let pred = |id, op, lits| Box::new(Expr::Pred(Predicate::new(id, op, lits)));
    assert_eq!(
        project(&not_lt, &spec, &optional, false),
        Expr::Or(
            Box::new(Expr::And(
                pred(1000, Op::GtEq, vec![Literal::Date(1)]),
                pred(1001, Op::GtEq, vec![i(24)]),
            )),
            Box::new(Expr::And(
                pred(1000, Op::IsNull, vec![]),
                pred(1001, Op::IsNull, vec![]),
            )),
        )
    );
    let e = Expr::Not(Box::new(Expr::Or(
        Box::new(Expr::Pred(Predicate::new(
            1,
            Op::Lt,
            vec![Literal::Timestamp(day)],
        ))),
        Box::new(Expr::Pred(Predicate::new(
            2,
            Op::Eq,
            vec![Literal::Long(7)],
        ))),
    )));
    // NOT(ts < X OR id = 7) = ts >= X AND id != 7; id != 7 has no inclusive projection
    let inc = project(&e, &spec, &schema, false);
    assert_eq!(
        inc,
        Expr::And(
            Box::new(Expr::Pred(Predicate::new(
                1000,
                Op::GtEq,
                vec![Literal::Date(1)]
            ))),
            Box::new(Expr::Pred(Predicate::new(1001, Op::GtEq, vec![i(24)]))),
        )
    );
    let strict = project(&e, &spec, &schema, true);
    let b7 = Transform::Bucket(4)
        .apply_literal(Some(&Literal::Long(7)), &ty("long"))
        .unwrap()
        .unwrap();
    assert_eq!(
        strict,
        Expr::And(
            Box::new(Expr::Or(
                // > day(X - 1us) = 0, moved up one by Java's fix for day <= 0
                Box::new(Expr::Pred(Predicate::new(
                    1000,
                    Op::Gt,
                    vec![Literal::Date(1)]
                ))),
                Box::new(Expr::Pred(Predicate::new(1001, Op::Gt, vec![i(23)]))),
            )),
            Box::new(Expr::Pred(Predicate::new(1002, Op::NotEq, vec![b7]))),
        )
    );
}
