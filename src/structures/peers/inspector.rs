//! Reads growable-bloom-filter's sub-filters out of its serde form, the one view it offers.

use serde::Serialize;

/// Set bits among bits `start..end` of a little-endian bit array.
fn count_range(bytes: &[u8], start: u64, end: u64) -> u64 {
    let bit = |i: u64| u64::from((bytes[(i / 8) as usize] >> (i % 8)) & 1);
    let (first_byte, last_byte) = (start.div_ceil(8), end / 8);
    if first_byte >= last_byte {
        return (start..end).map(bit).sum();
    }
    let whole: u64 =
        crate::structures::bloom::popcount(&bytes[first_byte as usize..last_byte as usize]);
    (start..first_byte * 8).map(bit).sum::<u64>()
        + whole
        + (last_byte * 8..end).map(bit).sum::<u64>()
}

/// What the serialised form shows of one sub-filter.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InspectedSub {
    pub bytes: u64,
    pub slices: u32,
    pub slice_bits: u64,
    /// Set bits of each slice.
    pub set_bits: Vec<u64>,
}

/// A serde serializer that reads the sub-filters out of a `GrowableBloom`: each one
/// serialises its buffer (bytes) and then its slice count (u64). Everything else is ignored.
#[derive(Default)]
pub(super) struct Inspector {
    pub(super) subs: Vec<InspectedSub>,
    buffer: Vec<u8>,
}

type SerResult = std::result::Result<(), std::fmt::Error>;
type Impossible = serde::ser::Impossible<(), std::fmt::Error>;

/// Serializer methods that all answer alike, `$answer`, whatever they are given (`$self`
/// is `self`, named by the caller so that `$answer` may use it).
macro_rules! answer {
    ($self:ident => $answer:expr; $($name:ident($($arg:ty),*) -> $ok:ty;)*) => {
        $(fn $name($self, $(_: $arg),*) -> std::result::Result<$ok, std::fmt::Error> {
            $answer
        })*
    };
}

impl serde::Serializer for &mut Inspector {
    type Ok = ();
    type Error = std::fmt::Error;
    type SerializeSeq = Self;
    type SerializeTuple = Impossible;
    type SerializeTupleStruct = Impossible;
    type SerializeTupleVariant = Impossible;
    type SerializeMap = Impossible;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible;

    answer!(self => Ok(());
        serialize_bool(bool) -> (); serialize_i8(i8) -> (); serialize_i16(i16) -> ();
        serialize_i32(i32) -> (); serialize_i64(i64) -> (); serialize_u8(u8) -> ();
        serialize_u16(u16) -> (); serialize_u32(u32) -> (); serialize_f32(f32) -> ();
        serialize_f64(f64) -> (); serialize_char(char) -> (); serialize_str(&str) -> ();
        serialize_unit_struct(&'static str) -> (); serialize_none() -> (); serialize_unit() -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
    );
    answer!(self => Ok(self);
        serialize_seq(Option<usize>) -> Self; serialize_struct(&'static str, usize) -> Self;
    );
    answer!(self => Err(std::fmt::Error);
        serialize_tuple(usize) -> Impossible;
        serialize_tuple_struct(&'static str, usize) -> Impossible;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Impossible;
        serialize_map(Option<usize>) -> Impossible;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Impossible;
    );

    /// A sub-filter's slice count, which follows its buffer.
    fn serialize_u64(self, slices: u64) -> SerResult {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let bytes = std::mem::take(&mut self.buffer);
        let slice_bits = bytes.len() as u64 * 8 / slices.max(1);
        let set_bits = (0..slices)
            .map(|i| count_range(&bytes, i * slice_bits, (i + 1) * slice_bits))
            .collect();
        self.subs.push(InspectedSub {
            bytes: bytes.len() as u64,
            slices: slices as u32,
            slice_bits,
            set_bits,
        });
        Ok(())
    }
    fn serialize_bytes(self, bytes: &[u8]) -> SerResult {
        self.buffer = bytes.to_vec();
        Ok(())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> SerResult {
        value.serialize(self)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> SerResult {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        value: &T,
    ) -> SerResult {
        value.serialize(self)
    }
}

impl serde::ser::SerializeSeq for &mut Inspector {
    type Ok = ();
    type Error = std::fmt::Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> SerResult {
        value.serialize(&mut **self)
    }
    fn end(self) -> SerResult {
        Ok(())
    }
}

impl serde::ser::SerializeStruct for &mut Inspector {
    type Ok = ();
    type Error = std::fmt::Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, _: &'static str, value: &T) -> SerResult {
        value.serialize(&mut **self)
    }
    fn end(self) -> SerResult {
        Ok(())
    }
}
