//! The pieces a kept answer is written from, and the same answer as one gzip member assembled
//! from them, with nothing compressed again on a repeated read.
//!
//! A kept piece (a `resources/read` template's text, the escaped mount runtime) is deflated once
//! (the runtime once per process, a template's text once per state of a session, when the
//! template is built: on a blocking thread, see `read_templates`), into a raw deflate stream ended by a sync flush: it is
//! byte-aligned, not final, and refers to nothing before its own start. Such streams concatenate
//! into one valid deflate stream (RFC 1951; pigz builds its members the same way), so an answer is
//! the gzip header (RFC 1952), each kept piece's stream in turn, each fresh piece (the envelope
//! with the request's id, the live token) as stored blocks, an empty final block, and the CRC-32
//! of the whole, combined from each kept piece's own.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use miniz_oxide::deflate::core::{
    CompressorOxide, TDEFLFlush, TDEFLStatus, compress_to_output, create_comp_flags_from_zip_params,
};
use zlib_rs::crc32::{crc32_combine_gen, crc32_combine_op};

/// zlib's default level: kept pieces are deflated once per state of a session.
const LEVEL: i32 = 6;
/// The level of a piece longer than [`FAST_ABOVE_BYTES`]: a card document with props near their
/// 4 MiB budget deflates four to eight times faster at level 1 than at 6, for a stream up to a
/// quarter longer (or a few times longer where it is tiny anyway; BENCHMARKS.md, "Large card
/// documents"). Sending such a piece uncompressed would cost about as much (stored blocks are a
/// copy) and ten to a hundred times the bytes.
const FAST_LEVEL: i32 = 1;
/// Longer than the mount runtime and than a common card document's own text, so those keep
/// level 6.
const FAST_ABOVE_BYTES: usize = 256 * 1024;
/// A negative window size asks for a raw stream (no zlib header).
const RAW_DEFLATE: i32 = -15;
/// ID1 ID2, CM = deflate, no flags, no modification time, no extra flags, OS unknown.
const GZIP_HEADER: &[u8] = &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
/// An empty stored block with BFINAL set.
const FINAL_BLOCK: &[u8] = &[0x01, 0x00, 0x00, 0xff, 0xff];
/// The most a stored block holds.
const STORED_BLOCK_MAX: usize = u16::MAX as usize;

/// Text kept across requests, deflated on first need.
pub struct KeptText {
    text: Bytes,
    deflated: OnceLock<Deflated>,
}

struct Deflated {
    stream: Bytes,
    crc: u32,
    /// zlib's operator that moves a CRC past this many bytes (`crc32_combine_gen`): with it a
    /// combine is one multiplication in GF(2), not a walk over the length's bits.
    shift: u32,
}

impl KeptText {
    pub fn new(text: impl Into<Bytes>) -> Self {
        Self {
            text: text.into(),
            deflated: OnceLock::new(),
        }
    }

    pub fn text(&self) -> &Bytes {
        &self.text
    }

    /// Deflates the text now unless it was already: for a caller on a blocking thread, so that
    /// answers written later find it done.
    pub fn deflate(&self) {
        self.deflated();
    }

    #[cfg(test)]
    pub fn is_deflated(&self) -> bool {
        self.deflated.get().is_some()
    }

    fn deflated(&self) -> &Deflated {
        self.deflated.get_or_init(|| Deflated {
            stream: deflate_synced(&self.text, level_for(self.text.len())),
            crc: crc32fast::hash(&self.text),
            shift: crc32_combine_gen(self.text.len() as u64),
        })
    }
}

/// One piece of an answer: kept (shared by every request that writes it) or made for this one.
#[derive(Clone)]
pub enum AnswerPiece {
    Kept(Arc<KeptText>),
    Fresh(Bytes),
}

impl AnswerPiece {
    /// The piece's bytes as they appear in the answer (a reference count, not a copy).
    pub fn text(&self) -> Bytes {
        match self {
            Self::Kept(kept) => kept.text.clone(),
            Self::Fresh(bytes) => bytes.clone(),
        }
    }
}

/// One text as one gzip member, in one buffer (a static asset's body).
pub fn gzip_whole(text: &'static str) -> Bytes {
    Bytes::from(gzip(&[AnswerPiece::Kept(Arc::new(KeptText::new(text)))]).concat())
}

/// The pieces' concatenation as one gzip member, as pieces to write one after the other.
pub fn gzip(pieces: &[AnswerPiece]) -> Vec<Bytes> {
    let mut out = Vec::with_capacity(pieces.len() * 2 + 3);
    out.push(Bytes::from_static(GZIP_HEADER));
    let (mut crc, mut length) = (0u32, 0usize);
    for piece in pieces {
        match piece {
            AnswerPiece::Kept(kept) if !kept.text.is_empty() => {
                let deflated = kept.deflated();
                crc = crc32_combine_op(crc, deflated.crc, deflated.shift);
                length += kept.text.len();
                out.push(deflated.stream.clone());
            }
            AnswerPiece::Kept(_) => {}
            AnswerPiece::Fresh(bytes) => {
                crc = crc32_continued(crc, bytes);
                length += bytes.len();
                out.push(stored_blocks(bytes));
            }
        }
    }
    // ISIZE is the length modulo 2^32 (RFC 1952).
    let length = length as u32;
    let mut trailer = Vec::with_capacity(FINAL_BLOCK.len() + 8);
    trailer.extend_from_slice(FINAL_BLOCK);
    trailer.extend_from_slice(&crc.to_le_bytes());
    trailer.extend_from_slice(&length.to_le_bytes());
    out.push(Bytes::from(trailer));
    out
}

/// The CRC-32 of what `crc` covered followed by `bytes`.
fn crc32_continued(crc: u32, bytes: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new_with_initial(crc);
    hasher.update(bytes);
    hasher.finalize()
}

fn level_for(length: usize) -> i32 {
    if length > FAST_ABOVE_BYTES { FAST_LEVEL } else { LEVEL }
}

/// A raw deflate stream of `text`, ended by a sync flush (an empty stored block) and not final.
fn deflate_synced(text: &[u8], level: i32) -> Bytes {
    let mut compressor = CompressorOxide::new(create_comp_flags_from_zip_params(level, RAW_DEFLATE, 0));
    let mut stream = Vec::with_capacity(text.len() / 3 + 64);
    let (status, consumed) = compress_to_output(&mut compressor, text, TDEFLFlush::Sync, |chunk| {
        stream.extend_from_slice(chunk);
        true
    });
    // Compressing into a growing vector cannot fail; a failure here is a bug in this module.
    assert!(
        status == TDEFLStatus::Okay && consumed == text.len(),
        "deflate stopped: {status:?} after {consumed} of {} bytes",
        text.len()
    );
    Bytes::from(stream)
}

/// `bytes` as non-final stored blocks (RFC 1951 §3.2.4), each byte-aligned.
fn stored_blocks(bytes: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(bytes.len() + 5 * (bytes.len() / STORED_BLOCK_MAX + 1));
    for chunk in bytes.chunks(STORED_BLOCK_MAX) {
        let length = chunk.len() as u16;
        out.push(0x00);
        out.extend_from_slice(&length.to_le_bytes());
        out.extend_from_slice(&(!length).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads a gzip member the way RFC 1952 lays it out and checks its trailer.
    fn gunzip(member: &[u8]) -> Vec<u8> {
        assert_eq!(&member[..10], GZIP_HEADER);
        let (deflate, trailer) = member[10..].split_at(member.len() - 18);
        let text = miniz_oxide::inflate::decompress_to_vec(deflate).expect("a valid deflate stream");
        assert_eq!(
            u32::from_le_bytes(trailer[..4].try_into().unwrap()),
            crc32fast::hash(&text)
        );
        assert_eq!(u32::from_le_bytes(trailer[4..].try_into().unwrap()), text.len() as u32);
        text
    }

    fn kept(text: &str) -> AnswerPiece {
        AnswerPiece::Kept(Arc::new(KeptText::new(text.to_owned())))
    }

    #[test]
    fn the_member_holds_the_pieces_in_order() {
        let long = "the mount runtime, again and again; ".repeat(5_000);
        let pieces = vec![
            AnswerPiece::Fresh(Bytes::from_static(b"{\"id\":7,\"result\":")),
            kept(&long),
            AnswerPiece::Fresh(Bytes::from_static(b"token")),
            kept(""),
            kept("{\"tail\":true}"),
            AnswerPiece::Fresh(Bytes::new()),
            AnswerPiece::Fresh(Bytes::from_static(b"}")),
        ];
        let expected: Vec<u8> = pieces.iter().flat_map(|p| p.text().to_vec()).collect();
        let member = gzip(&pieces).concat();
        assert_eq!(gunzip(&member), expected);
        assert!(member.len() < expected.len() / 10, "compressed: {} bytes", member.len());
        // Kept pieces first and back to back: each CRC moved past the next piece's length.
        let pieces = vec![kept(&long), kept("{\"tail\":true}"), kept(&long[..777])];
        let expected: Vec<u8> = pieces.iter().flat_map(|p| p.text().to_vec()).collect();
        assert_eq!(gunzip(&gzip(&pieces).concat()), expected);
    }

    #[test]
    fn a_fresh_piece_longer_than_a_stored_block_is_split() {
        let big: Vec<u8> = (0..200_000u32).map(|i| (i * 7919 % 251) as u8).collect();
        let pieces = [AnswerPiece::Fresh(Bytes::from(big.clone())), kept("end")];
        assert_eq!(gunzip(&gzip(&pieces).concat()), [big, b"end".to_vec()].concat());
    }

    #[test]
    fn a_piece_past_the_fast_level_threshold_travels_like_any_other() {
        let huge: String = (0..FAST_ABOVE_BYTES / 8 + 1)
            .map(|i| format!("{:08}", i * 7919 % 100_000_000))
            .collect();
        assert!(huge.len() > FAST_ABOVE_BYTES);
        let pieces = [
            kept("{\"head\":"),
            kept(&huge),
            AnswerPiece::Fresh(Bytes::from_static(b"token")),
            kept("}"),
        ];
        let expected: Vec<u8> = pieces.iter().flat_map(|p| p.text().to_vec()).collect();
        let member = gzip(&pieces).concat();
        assert_eq!(gunzip(&member), expected);
        assert!(
            member.len() < huge.len() / 2,
            "still compressed: {} bytes",
            member.len()
        );
    }

    #[test]
    fn a_kept_piece_is_deflated_once_and_reused() {
        let piece = kept(&"x".repeat(10_000));
        let first = gzip(std::slice::from_ref(&piece));
        let second = gzip(std::slice::from_ref(&piece));
        // The same stream, shared: the reference, not only the bytes.
        assert_eq!(first[1].as_ptr(), second[1].as_ptr());
    }
}
