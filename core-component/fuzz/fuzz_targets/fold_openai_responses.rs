//! The openai_responses stream fold and body parser on arbitrary bytes (see `src/lib.rs`).
#![no_main]

agent_core_fuzz::fold_target!(openai_responses, |fold, event| fold
    .handle(&event.data, &mut |_| {}));
