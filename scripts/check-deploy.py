"""Checks the deployment files, since Docker cannot run here: compose.yaml parses and names
cited, SearXNG, Valkey and PostgreSQL wired to each other, and the Dockerfile builds with
the same make targets `make run` uses. Run by `make test` with the SearXNG venv's Python
(which has PyYAML)."""

import re
import sys
from pathlib import Path

import yaml

root = Path(__file__).resolve().parent.parent
problems = []

compose = yaml.safe_load((root / "compose.yaml").read_text())
services = compose.get("services", {})
for name in ("cited", "searxng", "valkey", "postgres"):
    if name not in services:
        problems.append(f"compose.yaml has no service {name}")
cited = services.get("cited", {})
env = cited.get("environment", {})
expected = {
    "CITED_SEARXNG_URL": "http://searxng:8080",
    "CITED_REDIS_URL": "redis://valkey:6379/0",
}
for key, value in expected.items():
    if env.get(key) != value:
        problems.append(f"compose.yaml: cited's {key} is {env.get(key)!r}, not {value!r}")
if not str(env.get("CITED_DATABASE_URL", "")).startswith("postgres://"):
    problems.append("compose.yaml: cited's CITED_DATABASE_URL is not PostgreSQL")
if env.get("CITED_AUTH") not in ("accounts", "proxy"):
    problems.append("compose.yaml: cited listens beyond loopback, so it needs CITED_AUTH")
for dependency in ("searxng", "valkey", "postgres"):
    if dependency not in cited.get("depends_on", []):
        problems.append(f"compose.yaml: cited does not depend on {dependency}")
settings = services.get("searxng", {}).get("volumes", [])
if not any(str(v).startswith("./searxng/settings.yml:") for v in settings):
    problems.append("compose.yaml: SearXNG does not use searxng/settings.yml")
searxng_settings = yaml.safe_load((root / "searxng" / "settings.yml").read_text())
if "json" not in searxng_settings.get("search", {}).get("formats", []):
    problems.append("searxng/settings.yml does not turn JSON output on")

makefile = (root / "Makefile").read_text()
run = re.search(r"^run: (.*)$", makefile, re.M)
dockerfile = (root / "Dockerfile").read_text()
built = re.search(r"^RUN make (.*)$", dockerfile, re.M)
if not run or not built or run.group(1).split() != built.group(1).split():
    problems.append(
        f"the Dockerfile builds with `make {built and built.group(1)}`, "
        f"`make run` with `{run and run.group(1)}`"
    )
if "CITED_SITE_ROOT=/usr/share/cited/site" not in dockerfile:
    problems.append("the Dockerfile does not point CITED_SITE_ROOT at the site files")

for problem in problems:
    print(problem, file=sys.stderr)
print("deployment files: " + ("ok" if not problems else f"{len(problems)} problems"))
sys.exit(1 if problems else 0)
