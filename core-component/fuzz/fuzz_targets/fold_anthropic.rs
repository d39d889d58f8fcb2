//! The anthropic stream fold and body parser on arbitrary bytes (see `src/lib.rs`).
#![no_main]

agent_core_fuzz::fold_target!(anthropic, |fold, event| fold.handle(&event.data, &mut |_| {}));
