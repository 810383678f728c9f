-- 0040_access.sql: roles, access codes, embeds and access requests. None of
-- these tables emits row events: their facts (code.issued, code.revoked,
-- code.redeemed, access_request.*) are recorded by the use cases that
-- produce them (every table without a trigger declares none).

-- events: none (role changes are instance configuration; codes and embeds read them live)
CREATE TABLE access_roles (
    id             uuid        PRIMARY KEY,
    owner_id       uuid        NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    name           text        NOT NULL CHECK (name <> ''),
    uri_globs      text[]      NOT NULL,
    published_only boolean     NOT NULL DEFAULT true,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    CONSTRAINT access_roles_owner_name_key UNIQUE (owner_id, name),
    CONSTRAINT access_roles_owner_id_key UNIQUE (owner_id, id)
);

-- events: none (code.issued, code.revoked and code.redeemed are recorded by their use cases)
CREATE TABLE access_codes (
    id               uuid        PRIMARY KEY,
    owner_id         uuid        NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    role_id          uuid        NOT NULL,
    label            text        NOT NULL DEFAULT '',
    -- The value is never stored: its SHA-256 (values carry 160 random bits)
    -- and a short prefix to recognise it in lists.
    prefix           text        NOT NULL,
    code_hash        bytea       NOT NULL,
    deny_globs       text[]      NOT NULL DEFAULT '{}',
    expires_at       timestamptz,
    revoked_at       timestamptz,
    -- The access request the code was issued for (informational).
    request_id       uuid,
    redeem_count     integer     NOT NULL DEFAULT 0,
    last_redeemed_at timestamptz,
    created_at       timestamptz NOT NULL,
    CONSTRAINT access_codes_hash_key UNIQUE (code_hash),
    CONSTRAINT access_codes_owner_id_key UNIQUE (owner_id, id),
    -- The role belongs to the same owner, and a role in use cannot go.
    CONSTRAINT access_codes_role_fkey FOREIGN KEY (owner_id, role_id) REFERENCES access_roles (owner_id, id)
);
CREATE INDEX access_codes_owner_created_idx ON access_codes (owner_id, created_at DESC, id DESC);
CREATE INDEX access_codes_role_idx ON access_codes (role_id);

-- events: none (embeds are instance configuration; EmbedAdmits reads them live)
CREATE TABLE access_embeds (
    id         uuid        PRIMARY KEY,
    owner_id   uuid        NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    code_id    uuid        NOT NULL,
    name       text        NOT NULL CHECK (name <> ''),
    created_at timestamptz NOT NULL,
    CONSTRAINT access_embeds_code_fkey FOREIGN KEY (owner_id, code_id) REFERENCES access_codes (owner_id, id)
);
CREATE INDEX access_embeds_owner_created_idx ON access_embeds (owner_id, created_at DESC, id DESC);
CREATE INDEX access_embeds_code_idx ON access_embeds (code_id);

-- events: none (access_request.created, .approved and .status_changed are recorded by their use cases)
CREATE TABLE access_requests (
    id         uuid        PRIMARY KEY,
    owner_id   uuid        NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    name       text        NOT NULL,
    email      text        NOT NULL,
    message    text        NOT NULL DEFAULT '',
    status     text        NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    code_id    uuid,
    -- A hash of the client's address, for rate limiting; never the address.
    client_key text        NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX access_requests_owner_created_idx ON access_requests (owner_id, created_at DESC, id DESC);
CREATE INDEX access_requests_owner_client_idx ON access_requests (owner_id, client_key, created_at);
