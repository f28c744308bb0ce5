//! pw-status: see `pw_tools::status`.

fn main() {
    pw_wire::process::init("warn", pw_wire::process::LogFormat::Text);
    let stdout = &mut std::io::stdout().lock();
    let stderr = &mut std::io::stderr().lock();
    std::process::exit(pw_tools::status::main(
        std::env::args_os().collect(),
        stdout,
        stderr,
    ));
}
