//! The gemini stream fold and body parser on arbitrary bytes (see `src/lib.rs`).
#![no_main]

agent_core_fuzz::fold_target!(gemini, |fold, event| fold.handle(&event.data, &mut |_| {}));
