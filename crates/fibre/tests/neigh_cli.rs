//! `fibre neigh show` from a configuration file, and `neigh` lines a file
//! may not hold, refused with the file, the line and iproute2's message.

use std::process::Command;

const FIBRE: &str = env!("CARGO_BIN_EXE_fibre");

fn run(config: &str, args: &[&str]) -> (bool, String, String) {
    let dir = std::env::temp_dir().join(format!("fibre-neigh-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("n{}.conf", config.len()));
    std::fs::write(&path, config).unwrap();
    let out = Command::new(FIBRE)
        .arg("--config")
        .arg(&path)
        .args(args)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const ROUTER: &str = "link set lo up\n\
                      link add v0 type veth peer name v1\n\
                      link set v0 up\nlink set v1 up\n\
                      addr add 10.0.0.1/24 dev v0\n\
                      neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev v0\n\
                      neigh add 10.0.0.3 lladdr 02:00:00:00:00:03 dev v0 nud stale router\n\
                      neigh add 10.0.0.7 lladdr 02:00:00:00:00:07 dev v0 nud delay\n\
                      neigh add 10.0.0.5 lladdr 02:00:00:00:00:05 dev v0 nud noarp\n\
                      neigh add 2001:db8::2 lladdr 02:00:00:00:00:22 dev v0\n";

#[test]
fn neigh_show_prints_what_ip_prints() {
    let (ok, out, err) = run(ROUTER, &["neigh", "show"]);
    assert!(ok, "{err}");
    // NOARP is hidden by default; DELAY shows as PROBE at once, as the
    // kernel's timer runs it at once.
    assert_eq!(
        out,
        "10.0.0.2 dev v0 lladdr 02:00:00:00:00:02 PERMANENT \n\
         10.0.0.3 dev v0 lladdr 02:00:00:00:00:03 router STALE \n\
         10.0.0.7 dev v0 lladdr 02:00:00:00:00:07 PROBE \n\
         2001:db8::2 dev v0 lladdr 02:00:00:00:00:22 PERMANENT \n"
    );
    let (_, out, _) = run(ROUTER, &["-6", "neigh", "show", "dev", "v0"]);
    assert_eq!(out, "2001:db8::2 lladdr 02:00:00:00:00:22 PERMANENT \n");
    let (_, out, _) = run(
        ROUTER,
        &["-j", "neigh", "show", "10.0.0.4/31", "nud", "all"],
    );
    assert_eq!(
        out,
        "[{\"dst\":\"10.0.0.5\",\"dev\":\"v0\",\"lladdr\":\"02:00:00:00:00:05\",\"state\":[\"NOARP\"]}]\n"
    );
    let (ok, _, err) = run(ROUTER, &["neigh", "show", "dev", "v9"]);
    assert!(!ok);
    assert!(err.contains("Cannot find device \"v9\""), "{err}");
}

#[test]
fn bad_neigh_lines_are_refused_with_file_line_and_ips_message() {
    let text = format!("{ROUTER}neigh add 10.0.0.9 lladdr 02:00:00:00:00 dev v0\n");
    let (ok, _, err) = run(&text, &["neigh", "show"]);
    assert!(!ok);
    assert!(
        err.contains(".conf:11: Error: Invalid link address."),
        "{err}"
    );
    let text = format!("{ROUTER}neigh add 10.0.0.9 lladdr zz dev v0\n");
    let (ok, _, err) = run(&text, &["neigh", "show"]);
    assert!(!ok);
    assert!(err.contains(".conf:11: \"lladdr\": expected"), "{err}");
    assert!(err.contains("(\"zz\" is invalid lladdr.)"), "{err}");
}
