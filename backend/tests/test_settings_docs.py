"""Each setting is described once, on its `Settings` field, and the documents follow it.

docs/configuration.md and .env.example are written by `make settings-docs` from the fields
of app/config/; these tests fail while the committed copies differ from what it writes.
"""

from __future__ import annotations

from app.config import Section, Settings
from scripts import settings_docs


def test_every_setting_has_a_description_and_a_section() -> None:
    sections = {section.value for section in Section}
    for name, field in Settings.model_fields.items():
        assert field.description and field.description.strip(), f"{name} has no description"
        extra = field.json_schema_extra
        assert isinstance(extra, dict) and extra.get("section") in sections, (
            f"{name} has no section: give it json_schema_extra=doc(Section.…)"
        )


def test_secrets_have_no_default_to_show() -> None:
    secrets = [
        name
        for name, field in Settings.model_fields.items()
        if isinstance(field.json_schema_extra, dict) and field.json_schema_extra.get("secret")
    ]
    assert {"SECRET_KEY", "ADMIN_PASSWORD", "S3_SECRET_KEY", "LLM_API_KEY"} <= set(secrets)
    for name in secrets:
        field = Settings.model_fields[name]
        assert field.default is None and not field.examples, f"{name} would show a secret"
    example = settings_docs.render_env_example()
    for name in secrets:
        assert f"\n# {name}=\n" in example


def test_the_committed_documents_are_the_generated_ones() -> None:
    stale = [str(path.relative_to(settings_docs.REPO_ROOT)) for path in settings_docs.stale()]
    assert not stale, (
        f"{', '.join(stale)} differ from the descriptions in app/config/: "
        f"run `{settings_docs.COMMAND}` and commit the result"
    )


def test_every_setting_is_documented_once() -> None:
    documented = settings_docs.render_configuration()
    for name in Settings.model_fields:
        assert documented.count(f"| `{name}` |") == 1, name
