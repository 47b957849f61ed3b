"""Who may do what: API keys, scopes and roles, and the checks every interface shares."""
