#!/usr/bin/env node
// The codexacp launcher: runs the prebuilt codexacp binary that npm installed
// with this package's optional dependency for this platform
// (codexacp-<platform>-<arch>, packaging/npm/build.sh fills them).
//
// The binary gets this process's stdin, stdout and stderr as they are (the
// editor's ACP pipes: nothing is read, written or buffered here), and the
// arguments and environment. Its exit code becomes ours; SIGINT, SIGTERM and
// SIGHUP sent to us are passed on to it, and if a signal ends it, the same
// signal ends us.
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

// process.platform + " " + process.arch → the package with its binary.
const PACKAGES = {
  "linux x64": "codexacp-linux-x64",
  "linux arm64": "codexacp-linux-arm64",
  "darwin x64": "codexacp-darwin-x64",
  "darwin arm64": "codexacp-darwin-arm64",
  "win32 x64": "codexacp-win32-x64",
};

// say writes to stderr without making a stream of it: a stream could switch
// the pipe the binary inherits to non-blocking mode.
function say(msg) {
  try {
    fs.writeSync(2, "codexacp: " + msg + "\n");
  } catch {
    // Nowhere to report to.
  }
}

function fail(msg) {
  say(msg);
  process.exit(1);
}

function binary() {
  const platform = `${process.platform} ${process.arch}`;
  const pkg = PACKAGES[platform];
  if (!pkg) {
    fail(
      `no prebuilt binary for ${process.platform}-${process.arch} (there are: ${Object.values(PACKAGES).join(", ")}); ` +
        "build it from source instead: go install github.com/codexacp/codexacp/cmd/codexacp@latest",
    );
  }
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    fail(
      `the platform package ${pkg} is not installed; it holds the codexacp binary for ${process.platform}-${process.arch} ` +
        "and is an optional dependency of codexacp, so an install that omits optional dependencies " +
        "(--omit=optional, --no-optional) or was copied from another platform lacks it. " +
        `Reinstall codexacp with optional dependencies, or install ${pkg} beside it.`,
    );
  }
  const mine = require("../package.json").version;
  const theirs = require(`${pkg}/package.json`).version;
  if (mine !== theirs) {
    say(`warning: ${pkg} is version ${theirs}, this launcher is ${mine}; reinstall codexacp`);
  }
  return path.join(dir, "bin", process.platform === "win32" ? "codexacp.exe" : "codexacp");
}

const bin = binary();
let child;

// Handlers first: a signal that comes while the binary starts is not lost.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
for (const sig of forwarded) {
  try {
    process.on(sig, () => {
      try {
        child.kill(sig);
      } catch {
        // Not started, or already gone.
      }
    });
  } catch {
    // A signal this platform cannot catch.
  }
}

child = spawn(bin, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
child.on("error", (err) => fail(`cannot run ${bin}: ${err.message}`));
child.on("exit", (code, signal) => {
  if (signal && process.platform !== "win32") {
    // End the same way, so whoever started us sees the signal.
    for (const sig of forwarded) process.removeAllListeners(sig);
    try {
      process.kill(process.pid, signal);
    } catch {
      // Fall through to an exit status.
    }
    process.exit(128 + (os.constants.signals[signal] || 0));
  }
  process.exit(code ?? 1);
});
