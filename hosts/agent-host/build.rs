//! Builds the sandbox's init (`src/sandbox/init.c`), the first process of every sandboxed
//! command's PID namespace, which agent-host embeds and executes from memory (see
//! `src/sandbox/init_program.rs`). Linked statically where the C library allows it, so
//! that starting it loads nothing; dynamically otherwise (it then loads the C library
//! from the machine, which every command may read).

use std::path::PathBuf;
use std::process::Command;

const SOURCE: &str = "src/sandbox/init.c";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed={SOURCE}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("cargo sets OUT_DIR")?).join("agent-host-init");
    let compiler = cc::Build::new().get_compiler();
    let compile = |link_statically: bool| -> std::io::Result<bool> {
        let mut command: Command = compiler.to_command();
        command
            .args(["-Os", "-s", "-Wall", "-Wextra", "-Werror", "-o"])
            .arg(&out)
            .arg(SOURCE);
        if link_statically {
            command.arg("-static");
        }
        Ok(command.status()?.success())
    };
    if compile(true)? {
        return Ok(());
    }
    println!(
        "cargo:warning=the sandbox's init could not be linked statically (no static C library?); linking it dynamically"
    );
    match compile(false)? {
        true => Ok(()),
        false => Err(format!("cannot compile {SOURCE} with {:?}", compiler.path()).into()),
    }
}
