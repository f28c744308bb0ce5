//! pw-deploy: see the `pw_deploy` library.

fn main() {
    let stdout = &mut std::io::stdout().lock();
    let stderr = &mut std::io::stderr().lock();
    std::process::exit(pw_deploy::main(
        std::env::args_os().collect(),
        stdout,
        stderr,
    ));
}
