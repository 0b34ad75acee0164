//! Decoding: one Avro record at a time into the plan's builders.

use frazil_values::{Error, Result};

use super::builder::offset;
use super::builder::Builder;
use super::plan::Op;
use super::plan::RecordPlan;
use super::plan::Step;
use crate::avro::decode::Reader;

pub(super) fn read_record(
    plan: &RecordPlan,
    r: &mut Reader<'_>,
    children: &mut [Builder],
) -> Result<()> {
    for step in &plan.steps {
        match step {
            Step::Skip(skip) => skip.run(r)?,
            Step::Read(i, op) => read(op, r, &mut children[*i])?,
        }
    }
    for (i, fill) in &plan.fills {
        children[*i].append_fill(*fill)?;
    }
    Ok(())
}

pub(super) fn be_i128(bytes: &[u8]) -> Result<i128> {
    if bytes.len() > 16 {
        return Err(Error::decode(format!("decimal of {} bytes", bytes.len())));
    }
    if bytes.is_empty() {
        return Ok(0);
    }
    let fill = if bytes[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut buf = [fill; 16];
    buf[16 - bytes.len()..].copy_from_slice(bytes);
    Ok(i128::from_be_bytes(buf))
}

pub(super) fn internal() -> Error {
    Error::decode("internal error: plan and column disagree")
}

#[inline]
pub(super) fn read(op: &Op, r: &mut Reader<'_>, b: &mut Builder) -> Result<()> {
    match (op, b) {
        (
            Op::Nullable {
                null_index,
                value_index,
                op,
            },
            b,
        ) => {
            let i = r.long()?;
            if Some(i) == *null_index {
                b.append_null();
            } else if i == *value_index {
                read(op, r, b)?;
            } else {
                return Err(Error::decode(format!("union branch {i} out of range")));
            }
        }
        (Op::Null, b) => b.append_null(),
        (Op::Int, Builder::I32(v, n)) => {
            v.push(r.int()?);
            n.append_non_null();
        }
        (Op::LongToInt, Builder::I32(v, n)) => {
            let value = r.long()?;
            v.push(
                i32::try_from(value).map_err(|_| {
                    Error::decode(format!("long {value} does not fit the int field"))
                })?,
            );
            n.append_non_null();
        }
        (Op::IntToLong, Builder::I64(v, n)) => {
            v.push(i64::from(r.int()?));
            n.append_non_null();
        }
        (Op::Long, Builder::I64(v, n)) => {
            v.push(r.long()?);
            n.append_non_null();
        }
        (Op::Bool, Builder::Bool(v, n)) => {
            v.append(r.boolean()?);
            n.append_non_null();
        }
        (Op::Float, Builder::F32(v, n)) => {
            v.push(r.float()?);
            n.append_non_null();
        }
        (Op::Double, Builder::F64(v, n)) => {
            v.push(r.double()?);
            n.append_non_null();
        }
        (
            Op::Str | Op::Bytes | Op::FixedToBytes(_),
            Builder::Bytes {
                offsets,
                data,
                nulls,
            },
        ) => {
            let bytes = match op {
                Op::Str => r.string()?.as_bytes(),
                Op::FixedToBytes(n) => r.take(*n, "a fixed")?,
                _ => r.bytes()?,
            };
            data.extend_from_slice(bytes);
            offsets.push(offset(data.len())?);
            nulls.append_non_null();
        }
        (Op::Fixed(n), Builder::Fixed { size, data, nulls }) if n == size => {
            data.extend_from_slice(r.take(*n, "a fixed")?);
            nulls.append_non_null();
        }
        (Op::DecimalFixed(size), Builder::I128(v, n)) => {
            v.push(be_i128(r.take(*size, "a decimal")?)?);
            n.append_non_null();
        }
        (Op::DecimalBytes, Builder::I128(v, n)) => {
            v.push(be_i128(r.bytes()?)?);
            n.append_non_null();
        }
        (
            Op::Record(plan),
            Builder::Struct {
                children,
                nulls,
                len,
                ..
            },
        ) => {
            read_record(plan, r, children)?;
            nulls.append_non_null();
            *len += 1;
        }
        (
            Op::List(item),
            Builder::List {
                offsets,
                child,
                nulls,
                ..
            },
        ) => {
            loop {
                let n = r.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    read(item, r, child)?;
                }
            }
            offsets.push(offset(child.len())?);
            nulls.append_non_null();
        }
        (
            Op::Map(ops),
            Builder::Map {
                offsets,
                keys,
                values,
                nulls,
                ..
            },
        ) => {
            loop {
                let n = r.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    for (slot, op, skip) in ops {
                        match slot {
                            Some(0) => read(op, r, keys)?,
                            Some(_) => read(op, r, values)?,
                            None => r.skip(skip)?,
                        }
                    }
                }
            }
            offsets.push(offset(keys.len())?);
            nulls.append_non_null();
        }
        (
            Op::MapIntLong,
            Builder::Map {
                offsets,
                keys,
                values,
                nulls,
                ..
            },
        ) => {
            let (Builder::I32(kv, kn), Builder::I64(vv, vn)) = (keys.as_mut(), values.as_mut())
            else {
                return Err(internal());
            };
            loop {
                let n = r.block_count()?;
                if n == 0 {
                    break;
                }
                // written in place: no capacity check per value (n is bounded by the bytes
                // left; on an error the whole decode fails, so the zeros never escape)
                let start = kv.len();
                kv.reserve(n);
                vv.reserve(n);
                let keys = &mut kv.spare_capacity_mut()[..n];
                let vals = &mut vv.spare_capacity_mut()[..n];
                for (k, v) in keys.iter_mut().zip(vals) {
                    k.write(r.int()?);
                    v.write(r.long()?);
                }
                // SAFETY: the n values after `start` were all written just above (an error
                // returns before this, leaving the lengths as they were).
                unsafe {
                    kv.set_len(start + n);
                    vv.set_len(start + n);
                }
                kn.append_n_non_nulls(n);
                vn.append_n_non_nulls(n);
            }
            offsets.push(offset(kv.len())?);
            nulls.append_non_null();
        }
        (
            Op::MapIntBytes,
            Builder::Map {
                offsets,
                keys,
                values,
                nulls,
                ..
            },
        ) => {
            let (
                Builder::I32(kv, kn),
                Builder::Bytes {
                    offsets: vo,
                    data,
                    nulls: vn,
                },
            ) = (keys.as_mut(), values.as_mut())
            else {
                return Err(internal());
            };
            loop {
                let n = r.block_count()?;
                if n == 0 {
                    break;
                }
                let (start, ostart) = (kv.len(), vo.len());
                kv.reserve(n);
                vo.reserve(n);
                let keys = &mut kv.spare_capacity_mut()[..n];
                let offs = &mut vo.spare_capacity_mut()[..n];
                for (k, o) in keys.iter_mut().zip(offs) {
                    k.write(r.int()?);
                    let bytes = r.bytes()?;
                    // most bounds are 8 bytes: a fixed-size copy, not a memcpy call
                    match <&[u8; 8]>::try_from(bytes) {
                        Ok(eight) => data.extend_from_slice(eight),
                        Err(_) => data.extend_from_slice(bytes),
                    }
                    // checked once per block below: a wrapped offset fails the decode
                    o.write(data.len() as i32);
                }
                offset(data.len())?;
                // SAFETY: as above, all n keys and offsets were written.
                unsafe {
                    kv.set_len(start + n);
                    vo.set_len(ostart + n);
                }
                kn.append_n_non_nulls(n);
                vn.append_n_non_nulls(n);
            }
            offsets.push(offset(kv.len())?);
            nulls.append_non_null();
        }
        (
            Op::MapKeep(ops, keep),
            Builder::Map {
                offsets,
                keys,
                values,
                nulls,
                ..
            },
        ) => {
            loop {
                let n = r.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    // any writer layout: read the entry, then drop it if its key is not kept
                    let (kl, vl) = (keys.len(), values.len());
                    for (slot, op, skip) in ops {
                        match slot {
                            Some(0) => read(op, r, keys)?,
                            Some(_) => read(op, r, values)?,
                            None => r.skip(skip)?,
                        }
                    }
                    let Builder::I32(kv, kn) = keys.as_ref() else {
                        return Err(internal());
                    };
                    let key = kv.get(kl).copied().ok_or_else(internal)?;
                    if !(kn.is_valid(kl) && keep.contains(key)) {
                        keys.truncate(kl)?;
                        values.truncate(vl)?;
                    }
                }
            }
            offsets.push(offset(keys.len())?);
            nulls.append_non_null();
        }
        (
            Op::MapIntLongKeep(keep),
            Builder::Map {
                offsets,
                keys,
                values,
                nulls,
                ..
            },
        ) => {
            let (Builder::I32(kv, kn), Builder::I64(vv, vn)) = (keys.as_mut(), values.as_mut())
            else {
                return Err(internal());
            };
            loop {
                let n = r.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    let k = r.int()?;
                    if keep.contains(k) {
                        kv.push(k);
                        vv.push(r.long()?);
                        kn.append_non_null();
                        vn.append_non_null();
                    } else {
                        r.skip_varint()?;
                    }
                }
            }
            offsets.push(offset(kv.len())?);
            nulls.append_non_null();
        }
        (
            Op::MapIntBytesKeep(keep),
            Builder::Map {
                offsets,
                keys,
                values,
                nulls,
                ..
            },
        ) => {
            let (
                Builder::I32(kv, kn),
                Builder::Bytes {
                    offsets: vo,
                    data,
                    nulls: vn,
                },
            ) = (keys.as_mut(), values.as_mut())
            else {
                return Err(internal());
            };
            loop {
                let n = r.block_count()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    let k = r.int()?;
                    let bytes = r.bytes()?;
                    if keep.contains(k) {
                        kv.push(k);
                        data.extend_from_slice(bytes);
                        vo.push(offset(data.len())?);
                        kn.append_non_null();
                        vn.append_non_null();
                    }
                }
            }
            offsets.push(offset(kv.len())?);
            nulls.append_non_null();
        }
        _ => return Err(internal()),
    }
    Ok(())
}
