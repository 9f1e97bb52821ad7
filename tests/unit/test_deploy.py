"""deploy/: the Compose file an operator starts worldbook with (ADR 0018).

Checked without Docker: the file parses, has the four services with health checks, volumes
and restart policies, and every WORLDBOOK_* name in it and in its env files is a setting that
exists (a misspelt name would be silently ignored). With a Docker engine, the stack is started
and /ready answered; without one the test says so and skips.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from worldbook.settings import WorldbookSettings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SETTINGS = set(WorldbookSettings.model_fields)


def _compose() -> dict[str, Any]:
    loaded = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def _env_names(text: str) -> list[str]:
    return re.findall(r"^\s*#?\s*(WORLDBOOK_[A-Z0-9_]+)=", text, flags=re.MULTILINE)


def test_compose_file_has_the_services_an_operator_needs() -> None:
    compose = _compose()
    services = compose["services"]
    assert set(services) == {"api", "worker", "postgres", "redis"}
    for name, service in services.items():
        assert service["healthcheck"]["test"], name
        assert service["restart"] == "unless-stopped", name
        assert service.get("volumes"), f"{name} keeps no data in a volume"
        for volume in service["volumes"]:
            assert volume.split(":")[0] in compose["volumes"], volume
    for name in ("api", "worker"):
        depends = services[name]["depends_on"]
        assert {d: v["condition"] for d, v in depends.items()} == {
            "postgres": "service_healthy",
            "redis": "service_healthy",
        }
        files = [f if isinstance(f, str) else f["path"] for f in services[name]["env_file"]]
        for file in files:
            assert (DEPLOY / file).exists() or (DEPLOY / f"{file}.example").exists(), file
    assert services["api"]["command"][:2] == ["worldbook", "serve"]
    assert services["worker"]["command"][:2] == ["worldbook", "worker"]
    assert (DEPLOY / "Dockerfile").read_text().count("FROM ") == 1


def test_deploy_names_only_settings_that_exist() -> None:
    named: list[str] = []
    for path in DEPLOY.iterdir():
        if path.name.endswith((".env", ".env.example", ".yaml")):
            named += _env_names(path.read_text())
    assert len(named) >= 10
    unknown = sorted({n for n in named if n.removeprefix("WORLDBOOK_").lower() not in SETTINGS})
    assert not unknown, f"deploy/ names settings that do not exist: {unknown}"
    # and the env files parse as the settings they are meant to be
    values: dict[str, str] = {}
    for name in ("worldbook.env", "api.env", "secrets.env.example"):
        for line in (DEPLOY / name).read_text().splitlines():
            if line.startswith("WORLDBOOK_"):
                key, _, value = line.partition("=")
                values[key.removeprefix("WORLDBOOK_").lower()] = value
    built = WorldbookSettings(**values)  # type: ignore[arg-type]
    assert built.metrics == "token" and built.broker_url and built.log_format == "json"


def _docker_engine() -> str | None:
    """Why the stack cannot run here, or None when a Docker engine with Compose answers."""
    if shutil.which("docker") is None:
        return "no docker command"
    info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=30)
    if info.returncode != 0:
        return "no Docker engine answers `docker info`: " + info.stderr.strip()[-200:]
    compose = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
    return None if compose.returncode == 0 else "docker has no compose plugin"


@pytest.mark.slow
def test_the_stack_starts_when_docker_is_present() -> None:
    problem = _docker_engine()
    if problem is not None:
        pytest.skip(f"the Compose stack is not started: {problem}")
    base = ["docker", "compose", "-f", str(DEPLOY / "compose.yaml")]
    subprocess.run([*base, "config", "--quiet"], check=True, timeout=60)
    subprocess.run([*base, "up", "-d", "--build", "--wait"], check=True, timeout=1800)
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                with urllib.request.urlopen("http://127.0.0.1:8000/ready", timeout=5) as answer:
                    assert answer.status == 200
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(2)
    finally:
        subprocess.run([*base, "down", "-v"], timeout=300)
