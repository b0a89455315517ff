//! The measurement pipeline: the keys and index arithmetic of a run ([`keying`]), one
//! measurement set beside its predictions ([`measurement`]), the uniformity diagnostic
//! ([`uniformity`]), timing ([`timing`]), and a filter of your own ([`membership`]).

pub mod keying;
pub mod measurement;
pub mod membership;
pub mod timing;
pub mod uniformity;
