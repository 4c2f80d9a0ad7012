"""Single sign-on settings: an OpenID Connect provider (Keycloak, Okta, Entra ID, Google…)
whose users sign in with its button; docs/sign-in.md has examples for each."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.config.sections import Section, doc


class SsoSettings(BaseModel):
    """Section "Single sign-on": the OpenID Connect provider."""

    OIDC_ISSUER: str | None = Field(
        None,
        description="The provider's issuer URL (its `/.well-known/openid-configuration` is "
        "read from it), e.g. `https://keycloak.example.com/realms/acme`.",
        json_schema_extra=doc(Section.sso, unset="no single sign-on"),
    )
    OIDC_CLIENT_ID: str | None = Field(
        None,
        description="The client id the provider gave the workbench. Register "
        "`<PUBLIC_URL>/api/v1/auth/oidc/callback` as its redirect URI.",
        json_schema_extra=doc(Section.sso, unset="required with `OIDC_ISSUER`"),
    )
    OIDC_CLIENT_SECRET: str | None = Field(
        None,
        description="The client's secret.",
        json_schema_extra=doc(Section.sso, secret=True),
    )
    OIDC_NAME: str = Field(
        "single sign-on",
        description="The provider's name on the login page's button (\"Sign in with …\").",
        json_schema_extra=doc(Section.sso),
    )
    OIDC_SCOPES: str = Field(
        "openid email profile",
        description="The scopes asked for, space-separated (add the one that carries groups "
        "when `OIDC_ADMIN_GROUP` is set, if the provider needs one).",
        json_schema_extra=doc(Section.sso),
    )
    OIDC_ALLOWED_DOMAINS: str | None = Field(
        None,
        description="Comma-separated email domains whose people get an account on their "
        "first sign-in, e.g. `example.com,example.org`.",
        json_schema_extra=doc(Section.sso, unset="anyone the provider signs in"),
    )
    OIDC_GROUPS_CLAIM: str = Field(
        "groups",
        description="The ID token's claim that lists the person's groups.",
        json_schema_extra=doc(Section.sso),
    )
    OIDC_ADMIN_GROUP: str | None = Field(
        None,
        description="Members of this group are administrators (checked at every sign-in: "
        "leaving the group removes the role); others are not.",
        json_schema_extra=doc(Section.sso, unset="the provider never changes who is an admin"),
    )
