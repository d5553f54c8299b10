//! The SSE path of HTTP recording: an upstream's event stream, cut into
//! chunks anywhere, parsed incrementally and its data read as messages.
//! The first byte says where to cut.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&step, body)) = data.split_first() else {
        return;
    };
    let step = usize::from(step.max(1));
    let chunks: Vec<&[u8]> = body.chunks(step).collect();
    let messages = mcpcassette::fuzzing::sse_messages(&chunks);
    // Cutting differently finds the same messages.
    let whole = mcpcassette::fuzzing::sse_messages(&[body]);
    assert_eq!(messages, whole);
});
