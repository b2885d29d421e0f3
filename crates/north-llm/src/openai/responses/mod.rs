//! The OpenAI Responses API (`/v1/responses`): OpenAI's recommended API and
//! the only one that carries a reasoning model's reasoning across tool calls.
//!
//! North keeps no state on the server: every request says `store: false`
//! and asks for `reasoning.encrypted_content`; reasoning items come back in
//! the stream, are kept in the history as [`ContentBlock::Reasoning`], and
//! are sent back (without their ids, which refer to nothing stored) before
//! the function calls they led to.
//!
//! [`ContentBlock::Reasoning`]: north_protocol::ContentBlock::Reasoning

mod decode;
mod encode;
mod response;

pub use decode::ResponsesDecoder;
pub use encode::encode_request;
pub use response::decode_response;
