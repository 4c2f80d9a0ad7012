"""Sending email (invites) through the SMTP server of the settings."""
