#!/usr/bin/env bash
# Usage: scripts/python-venv.sh DIR
#
# Makes DIR a virtualenv of Debian's python3 in which the service's SDK 2.x
# ($MINIPOD_CLIENTS/runpod-python-2: `import runpod`, `runpod.apps`, the `rp` command) and
# runpod-flash ($MINIPOD_CLIENTS/runpod-flash/src: `import runpod_flash`, `@Endpoint`) import and
# run, with no network: the packages they need come from a folder of wheels (MINIPOD_WHEELS,
# default /opt/pypi/files, which the machine image keeps), the two SDKs from the clients folder
# named by MINIPOD_CLIENTS (required) through a .pth file, so the venv always runs those sources as
# they are there.
#
# The venv does not see Debian's site-packages: Debian's fastapi 0.92 and starlette 0.26 need
# pydantic 1 while runpod-flash needs pydantic 2, and Debian's aiohttp 3.8 and urllib3 1.26 are
# older than the SDK's floor (aiohttp>=3.14.1, urllib3>=2.7), so mixing both would shadow or
# break one of them. Everything is installed from the wheel folder instead; it needs only
# Debian's python3, python3-venv and python3-pip.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DIR" >&2
  exit 2
fi
dir="$1"
root="$(cd "$(dirname "$0")/.." && pwd)"
clients="${MINIPOD_CLIENTS:?set MINIPOD_CLIENTS to the folder of the service's Python clients (docs/development.md)}"
stubs="${MINIPOD_STUBS:-$root/../shared/clients/python/stubs}"
wheels="${MINIPOD_WHEELS:-/opt/pypi/files}"
python="${MINIPOD_PYTHON:-/usr/bin/python3}"

for d in "$clients/runpod-python-2" "$clients/runpod-flash/src" "$stubs"; do
  if [ ! -d "$d" ]; then
    echo "no folder $d (set MINIPOD_CLIENTS to the folder of the service's Python clients, MINIPOD_STUBS to the stand-ins)" >&2
    exit 1
  fi
done
if [ ! -d "$wheels" ]; then
  echo "no wheel folder at $wheels (set MINIPOD_WHEELS)" >&2
  exit 1
fi

# Without a pip of its own: seeding one through ensurepip takes seconds; Debian's pip installs
# into the venv with --python, and a pip from the wheel folder is installed with the rest.
"$python" -m venv --without-pip "$dir"
venv_python="$dir/bin/python"

# What the two SDKs import, with their requirement floors (runpod-python-2/requirements.txt,
# runpod-flash/pyproject.toml); pip takes the rest of the tree from the same folder.
# Left out because no wheel exists here and nothing on these paths imports them: inquirerpy
# (requirements.txt; no module imports it), questionary (runpod-flash's `undeploy` and `env`
# commands only), aiohttp-retry and tqdm-loggable (stand-ins in the stubs folder beside the repository).
# pytest is there so that a test file can call an app's .remote() through the minipod fixture.
"$python" -m pip --python "$venv_python" install --quiet --disable-pip-version-check \
  --no-index --find-links "$wheels" \
  pip \
  "aiohttp>=3.14.1" "backoff>=2.2.1" "boto3>=1.43.51" "click>=8.4.2" "cloudpickle>=3.1.1" \
  "colorama>=0.4.6,<0.4.7" "cryptography>=49.0.0" "fastapi>=0.139.2" "uvicorn>=0.34.0" \
  "python-multipart" "paramiko>=5.0.0" "prettytable>=3.18.0" "psutil>=7.2.2" "py-cpuinfo>=9.0.0" \
  "requests>=2.34.2" "rich>=14.0.0" "tomli>=2.4.1" "tomlkit>=0.15.1" "tqdm" "urllib3>=2.7.0" \
  "aiofiles" "httpx" "pydantic>=2.11.4" "python-dotenv>=1.0.0" "typer>=0.12.0" \
  "pathspec>=0.11.0" "watchfiles" "pytest"

# The SDK sources, and the stand-ins for what no wheel provides. The stubs folder's
# sitecustomize.py only patches an aiohttp older than 3.9, so it does nothing here.
purelib="$("$venv_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
printf '%s\n' "$clients/runpod-python-2" "$clients/runpod-flash/src" "$(cd "$stubs" && pwd)" \
  > "$purelib/minipod-clients.pth"

# The console scripts the SDK 2.x declares ([project.scripts]), as pip would write them.
# runpod-flash's own `flash` command is not written: its `env` and `undeploy` commands import
# questionary at start-up, which neither Debian nor the wheel folder has; the library
# (`from runpod_flash import Endpoint`) does not need it.
script() {
  local name="$1" module="$2" func="$3"
  cat > "$dir/bin/$name" <<EOF
#!$venv_python
import sys
from $module import $func
if __name__ == "__main__":
    sys.exit($func())
EOF
  chmod +x "$dir/bin/$name"
}
script rp runpod.rp_cli.main run
script runpod runpod.rp_cli.main run

# From inside the venv: importing runpod_flash writes .flash/logs/ under the working directory.
(cd "$dir" && "$venv_python" -c 'import runpod, runpod.apps, runpod_flash')
echo "$dir: runpod (SDK 2.x) and runpod_flash ready; activate with . $dir/bin/activate"
