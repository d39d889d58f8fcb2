use bindings::exports::test::hostile_plain::attacks::Guest;
use std::hint::black_box;
use wasip2::cli::environment::get_environment;
use wasip2::clocks::monotonic_clock;

mod bindings {
    wit_bindgen::generate!({ path: "wit/hostile-plain.wit", world: "hostile-plain" });
}

#[used]
#[unsafe(link_section = "agent-tool-wit")]
static WIT: [u8; include_bytes!("../wit/hostile-plain.wit").len()] =
    *include_bytes!("../wit/hostile-plain.wit");

const MIB: usize = 1 << 20;

struct Hostile;

impl Guest for Hostile {
    fn read_file(path: String) -> Result<String, String> {
        let bytes = plain_fs::read(&path, u64::MAX).map_err(|error| error.to_string())?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn list_preopens() -> Vec<String> {
        plain_fs::preopen_names()
    }

    fn get_var(name: String) -> Option<String> {
        get_environment()
            .into_iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value)
    }

    fn spin(seconds: u32) -> u64 {
        let deadline = monotonic_clock::now().saturating_add(u64::from(seconds) * 1_000_000_000);
        let mut rounds: u64 = 0;
        loop {
            // The clock is read between long stretches of pure computation, so nearly all
            // the time is spent where only the host's interruption can stop it.
            for _ in 0..1_000_000 {
                rounds = black_box(rounds.wrapping_add(1));
            }
            if monotonic_clock::now() >= deadline {
                return rounds;
            }
        }
    }

    fn allocate(mib: u32) -> u32 {
        // A non-zero fill makes every page really written: a zeroed allocation could be
        // satisfied by fresh memory without touching it.
        let blocks: Vec<Vec<u8>> = (0..mib).map(|_| vec![0xa5u8; MIB]).collect();
        let intact = black_box(&blocks)
            .iter()
            .filter(|block| block.iter().step_by(4096).all(|&byte| byte == 0xa5))
            .count();
        u32::try_from(intact).unwrap_or(u32::MAX)
    }

    fn write_file(path: String, text: String) -> Result<(), String> {
        plain_fs::write(&path, text.as_bytes()).map_err(|error| error.to_string())
    }

    fn make_link(target: String, path: String) -> Result<(), String> {
        plain_fs::symlink(&target, &path).map_err(|error| error.to_string())
    }

    fn make_hard_link(existing: String, path: String) -> Result<(), String> {
        plain_fs::hard_link(&existing, &path).map_err(|error| error.to_string())
    }
}

bindings::export!(Hostile with_types_in bindings);
