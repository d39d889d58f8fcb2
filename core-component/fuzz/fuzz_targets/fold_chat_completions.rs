//! The chat_completions stream fold and body parser on arbitrary bytes (see `src/lib.rs`).
#![no_main]

agent_core_fuzz::fold_target!(chat_completions, |fold, event| fold.handle(
    &event.event,
    &event.data,
    &mut |_| {}
));
