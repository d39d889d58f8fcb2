//! A real OpenSSH sshd on 127.0.0.1 for the SSH environment's tests: generated host and
//! client keys, a known_hosts file naming the host key, key authentication only.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Sshd {
    child: Child,
    pub dir: tempfile::TempDir,
    pub port: u16,
    pub user: String,
    pub key: PathBuf,
    pub known_hosts: PathBuf,
}

fn keygen(path: &std::path::Path) -> anyhow::Result<String> {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()?;
    anyhow::ensure!(status.success(), "ssh-keygen failed");
    Ok(std::fs::read_to_string(path.with_extension("pub"))?)
}

impl Sshd {
    /// Starts sshd (installed by `scripts/ensure-sshd.sh`, which `make test` runs).
    pub fn start() -> anyhow::Result<Self> {
        anyhow::ensure!(
            std::path::Path::new("/usr/sbin/sshd").is_file(),
            "/usr/sbin/sshd is missing: run scripts/ensure-sshd.sh (make test does)"
        );
        let dir = tempfile::tempdir()?;
        let host_pub = keygen(&dir.path().join("host_key"))?;
        let client_pub = keygen(&dir.path().join("id_ed25519"))?;
        std::fs::write(dir.path().join("authorized_keys"), client_pub)?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        std::fs::write(
            dir.path().join("known_hosts"),
            format!("[127.0.0.1]:{port} {host_pub}"),
        )?;
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nUsePAM no\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
             PermitRootLogin prohibit-password\nSubsystem sftp internal-sftp\nLogLevel ERROR\n",
            d = dir.path().display()
        );
        std::fs::write(dir.path().join("sshd_config"), config)?;
        // Privilege separation needs its directory (absent when sshd was never started).
        let _ = std::fs::create_dir_all("/run/sshd");
        let child = Command::new("/usr/sbin/sshd")
            .args(["-D", "-e", "-f"])
            .arg(dir.path().join("sshd_config"))
            .stdin(Stdio::null())
            // The readiness probe below makes sshd log a closed connection; keep it in a file.
            .stderr(std::fs::File::create(dir.path().join("sshd.log"))?)
            .spawn()?;
        let user = String::from_utf8(Command::new("id").arg("-un").output()?.stdout)?
            .trim()
            .to_string();
        // The deadline guards against a hang only: sshd listens within a fraction of a second.
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            anyhow::ensure!(
                started.elapsed() < Duration::from_secs(10),
                "sshd did not start listening on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(Self {
            key: dir.path().join("id_ed25519"),
            known_hosts: dir.path().join("known_hosts"),
            child,
            dir,
            port,
            user,
        })
    }

    /// `ssh://user@127.0.0.1:port/<path>`.
    pub fn url(&self, path: &std::path::Path) -> String {
        format!("ssh://{}@127.0.0.1:{}{}", self.user, self.port, path.display())
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
