"""deploy/k8s: kustomize renders the base and the example overlay, every manifest passes the
Kubernetes schemas, and the pieces agree with each other, the images and the service."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from fastapi.testclient import TestClient

from tests.deploy.conftest import (
    DEPLOY,
    KUBERNETES_VERSION,
    PROBE_IMAGE,
    REFRESH_IMAGE,
    REPO,
    SERVICE_IMAGE,
    SERVICE_PORT,
    cli_options,
    containers,
    known_env_name,
    kustomize,
    one,
    yaml_documents,
)

PROBE_JOB = DEPLOY / "k8s" / "probe" / "job.yaml"
CATALOG_FILES = sorted(p.name for p in (REPO / "catalogs").glob("*.yaml"))
# "The data stored in a ConfigMap cannot exceed 1 MiB"
# (https://kubernetes.io/docs/concepts/configuration/configmap/).
CONFIGMAP_MAX_BYTES = 1 << 20


def _pod(doc: dict[str, Any]) -> dict[str, Any]:
    spec = doc["spec"]
    if doc["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    pod: dict[str, Any] = spec["template"]["spec"]
    return pod


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e for e in container.get("env", [])}


@pytest.mark.parametrize("which", ["base", "overlay"])
def test_every_rendered_manifest_passes_the_kubernetes_schemas(
    which: str, request: pytest.FixtureRequest
) -> None:
    docs: list[dict[str, Any]] = request.getfixturevalue(which)
    kinds = sorted(d["kind"] for d in docs)
    assert kinds == sorted(
        [
            "ConfigMap",
            "CronJob",
            "Deployment",
            "HorizontalPodAutoscaler",
            "PodDisruptionBudget",
            "Role",
            "RoleBinding",
            "Service",
            "ServiceAccount",
        ]
    )
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_probe_job_template_passes_the_kubernetes_schemas() -> None:
    (job,) = yaml_documents(PROBE_JOB)
    kubernetes_validate.validate(job, KUBERNETES_VERSION, strict=True)


def test_the_validator_rejects_a_broken_manifest(base: list[dict[str, Any]]) -> None:
    broken = dict(one(base, "Service"), spec={"ports": [{"port": "eighty"}]})
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)


def test_api_probes_ask_real_endpoints_on_the_served_port(
    base: list[dict[str, Any]], service: TestClient
) -> None:
    api = next(c for c in _pod(one(base, "Deployment")).get("containers", []) if c["name"] == "api")
    (port,) = api["ports"]
    assert port["containerPort"] == SERVICE_PORT
    args = api["args"]
    assert args[0] == "serve" and int(args[args.index("--port") + 1]) == SERVICE_PORT
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
    for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = api[kind]["httpGet"]
        assert get["port"] == port["name"]
        assert service.get(get["path"]).status_code == 200, get["path"]


def test_pods_use_the_images_and_only_known_settings(base: list[dict[str, Any]]) -> None:
    deployment = _pod(one(base, "Deployment"))
    cron = _pod(one(base, "CronJob"))
    images = {c["name"]: c["image"].split(":")[0] for c in containers(deployment)}
    assert images == {"migrate": SERVICE_IMAGE, "api": SERVICE_IMAGE}
    assert {c["name"]: c["image"].split(":")[0] for c in containers(cron)} == {
        "refresh": REFRESH_IMAGE,
        "publish": "registry.k8s.io/kubectl",
    }
    for pod in (deployment, cron):
        for container in containers(pod):
            assert all(known_env_name(n) for n in _env(container)), container["name"]


def test_migrations_run_in_the_init_container_and_serving_never_migrates(
    base: list[dict[str, Any]],
) -> None:
    pod = _pod(one(base, "Deployment"))
    (migrate,) = pod["initContainers"]
    assert migrate["args"] == ["db", "upgrade"]
    api = _env(pod["containers"][0])
    assert api["RECOMMENDER_AUTO_MIGRATE"]["value"] == "false"
    for env in (_env(migrate), api):
        ref = env["RECOMMENDER_DATABASE_URL"]["valueFrom"]["secretKeyRef"]
        assert ref == {"name": "recommender-database", "key": "url"}


def test_pods_run_as_the_images_non_root_user(base: list[dict[str, Any]]) -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    for kind in ("Deployment", "CronJob"):
        pod = _pod(one(base, kind))
        uid = pod["securityContext"]["runAsUser"]
        assert pod["securityContext"]["runAsNonRoot"] and f"USER {uid}:" in dockerfile
        for container in containers(pod):
            assert container["securityContext"]["allowPrivilegeEscalation"] is False


def test_service_hpa_and_pdb_find_the_api_pods(base: list[dict[str, Any]]) -> None:
    deployment = one(base, "Deployment")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    svc = one(base, "Service")
    assert svc["spec"]["selector"].items() <= pod_labels.items()
    assert svc["spec"]["ports"][0]["targetPort"] == "http"
    pdb = one(base, "PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    target = one(base, "HorizontalPodAutoscaler")["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])


def test_catalogs_configmap_is_mounted_where_the_service_reads(base: list[dict[str, Any]]) -> None:
    cm = one(base, "ConfigMap")
    assert cm["metadata"]["name"] == "recommender-catalogs"  # fixed: the CronJob updates it
    assert sorted(cm["data"]) == CATALOG_FILES
    assert cm["data"]["accelerators.yaml"] == (REPO / "catalogs" / "accelerators.yaml").read_text()
    size_bytes = sum(len(k) + len(v.encode()) for k, v in cm["data"].items())
    assert size_bytes < CONFIGMAP_MAX_BYTES, f"the catalogs outgrew one ConfigMap: {size_bytes} B"
    pod = _pod(one(base, "Deployment"))
    (volume,) = [v for v in pod["volumes"] if v.get("configMap")]
    assert volume["configMap"]["name"] == cm["metadata"]["name"]
    api = pod["containers"][0]
    (mount,) = [m for m in api["volumeMounts"] if m["name"] == volume["name"]]
    assert _env(api)["RECOMMENDER_CATALOG_DIR"]["value"] == mount["mountPath"]


def test_refresh_may_patch_only_the_catalogs_configmap(base: list[dict[str, Any]]) -> None:
    (rule,) = one(base, "Role")["rules"]
    assert rule["resources"] == ["configmaps"]
    assert rule["resourceNames"] == [one(base, "ConfigMap")["metadata"]["name"]]
    assert set(rule["verbs"]) == {"get", "patch"}
    binding = one(base, "RoleBinding")
    account = _pod(one(base, "CronJob"))["serviceAccountName"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account}]
    assert one(base, "ServiceAccount")["metadata"]["name"] == account


def test_refresh_script_publishes_the_same_configmap(
    base: list[dict[str, Any]], tmp_path: Path
) -> None:
    """Run the CronJob's refresh script with a stand-in `recommender`, then render what the
    publish container applies: the ConfigMap the API mounts, with every catalog file."""
    pod = _pod(one(base, "CronJob"))
    (refresh,) = pod["initContainers"]
    script: str = refresh["args"][0]
    mounts = {m["name"]: m["mountPath"] for m in refresh["volumeMounts"]}
    source, work = tmp_path / "configmap", tmp_path / "work"
    source.mkdir()
    for name in CATALOG_FILES:
        (source / name).write_text((REPO / "catalogs" / name).read_text())
    script = script.replace(mounts["catalogs"], str(source)).replace(mounts["work"], str(work))
    stub = tmp_path / "bin" / "recommender"
    stub.parent.mkdir()
    stub.write_text(f'#!/bin/sh\necho "$@" > {tmp_path}/called\n')
    stub.chmod(0o755)
    env = {"PATH": f"{stub.parent}:{os.environ['PATH']}", "REFRESH_CLOUDS": "aws"}
    subprocess.run([*refresh["command"], script], env=env, check=True, timeout=60)
    called = (tmp_path / "called").read_text().split()
    assert called[:4] == ["catalog", "refresh", "--cloud", "aws"]
    assert {a for a in called if a.startswith("--")} <= cli_options("catalog", "refresh")
    assert called[called.index("--catalog-dir") + 1] == f"{work}/catalogs"
    publish = pod["containers"][0]
    assert publish["args"][-2:] == ["-k", mounts["work"]] and "--server-side" in publish["args"]
    (published,) = kustomize(work)
    assert published["kind"] == "ConfigMap"
    assert published["metadata"]["name"] == one(base, "ConfigMap")["metadata"]["name"]
    assert sorted(published["data"]) == CATALOG_FILES


def test_overlay_sets_namespace_images_replicas_and_refresh_clouds(
    overlay: list[dict[str, Any]],
) -> None:
    assert {d["metadata"].get("namespace") for d in overlay} == {"recommender"}
    deployment = one(overlay, "Deployment")
    assert deployment["spec"]["replicas"] == 3
    for container in containers(_pod(deployment)):
        assert container["image"].endswith(f"/{SERVICE_IMAGE}:0.1.0")
    (refresh,) = _pod(one(overlay, "CronJob"))["initContainers"]
    assert refresh["image"].endswith(f"/{REFRESH_IMAGE}:0.1.0")
    assert _env(refresh)["REFRESH_CLOUDS"]["value"] == "aws"
    assert "envFrom" in refresh  # the patch merged, not replaced, the container


def test_probe_job_asks_for_a_gpu_of_one_type_and_posts_back() -> None:
    (job,) = yaml_documents(PROBE_JOB)
    pod = _pod(job)
    (probe,) = pod["containers"]
    assert probe["image"].split(":")[0] == PROBE_IMAGE
    assert probe["resources"]["requests"]["nvidia.com/gpu"] == 1
    assert probe["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert "nvidia.com/gpu.product" in pod["nodeSelector"]
    args = probe["args"]
    assert {a for a in args if a.startswith("--")} <= cli_options("probe")
    assert args[args.index("--post-to") + 1].startswith("http://recommender.")
    key = _env(probe)["RECOMMENDER_API_KEY"]
    assert "value" not in key and key["valueFrom"]["secretKeyRef"]["name"]
    assert all(known_env_name(n) for n in _env(probe))
