#!/usr/bin/env python3
"""Prints action.yml (a composite action) as an equivalent workflow.

actionlint checks workflows, not action metadata, so .ci/actionlint lints
this translation: the action's inputs become `workflow_call` inputs, its
steps one job's steps, and its outputs that job's outputs. The steps' `run:`
scripts, expressions and `uses:` are then checked as in any workflow,
shellcheck included. Error lines refer to the translation, which keeps each
step's name.
"""

import sys

import yaml


class Literal(str):
    """A multi-line string, written as a `|` block."""


def literal(dumper, value):
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")


def blocks(value):
    if isinstance(value, dict):
        return {k: blocks(v) for k, v in value.items()}
    if isinstance(value, list):
        return [blocks(v) for v in value]
    if isinstance(value, str) and "\n" in value:
        return Literal(value)
    return value


def main(path):
    with open(path, encoding="utf-8") as f:
        action = yaml.safe_load(f)
    runs = action["runs"]
    if runs.get("using") != "composite":
        sys.exit(f"{path}: not a composite action")
    inputs = {
        name: {
            "description": spec.get("description", ""),
            "type": "string",
            "required": bool(spec.get("required", False)),
        }
        for name, spec in (action.get("inputs") or {}).items()
    }
    outputs = {
        name: spec["value"] for name, spec in (action.get("outputs") or {}).items()
    }
    workflow = {
        "name": f"{action['name']} (action.yml as a workflow)",
        "on": {"workflow_call": {"inputs": inputs}},
        "permissions": {"contents": "read"},
        "jobs": {
            "action": {
                "runs-on": "ubuntu-latest",
                "outputs": outputs,
                "steps": runs["steps"],
            }
        },
    }
    yaml.add_representer(Literal, literal, Dumper=yaml.SafeDumper)
    sys.stdout.write(
        yaml.safe_dump(blocks(workflow), sort_keys=False, width=1000, allow_unicode=True)
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "action.yml")
