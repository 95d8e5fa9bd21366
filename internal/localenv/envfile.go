package localenv

// EnvFile is the local stack's env file, relative to the repository root.
// scripts/local-up.sh writes .local/stack-<localstack port>-<ses port>/herald.env
// and links EnvFile to it, so EnvFile names the stack started last whatever
// its ports; scripts/local-down.sh moves the link to a stack still running.
// Sourced (SourceEnvFile), it sets the SDKs' endpoint variables, the Region,
// dummy credentials and the queue URLs.
const EnvFile = ".local/herald.env"

// SourceEnvFile is the shell line that exports EnvFile's variables.
const SourceEnvFile = "set -a; . " + EnvFile + "; set +a"
