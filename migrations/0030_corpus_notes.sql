-- 0030_corpus_notes.sql: notes, their URIs, and the row trigger that makes
-- every watched change an event, and the text-search
-- functions both searches use.

-- A note's lang (a BCP 47 tag; only the primary subtag counts) mapped to a
-- text-search configuration of PostgreSQL, else 'simple' (no stemming; used
-- for Chinese, Japanese, Korean and every language PostgreSQL has no
-- configuration for).
CREATE FUNCTION corpus_ts_config(lang text) RETURNS regconfig
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT CASE lower(split_part(split_part(coalesce(lang, ''), '-', 1), '_', 1))
    WHEN 'ar' THEN 'pg_catalog.arabic'
    WHEN 'hy' THEN 'pg_catalog.armenian'
    WHEN 'eu' THEN 'pg_catalog.basque'
    WHEN 'ca' THEN 'pg_catalog.catalan'
    WHEN 'da' THEN 'pg_catalog.danish'
    WHEN 'nl' THEN 'pg_catalog.dutch'
    WHEN 'en' THEN 'pg_catalog.english'
    WHEN 'fi' THEN 'pg_catalog.finnish'
    WHEN 'fr' THEN 'pg_catalog.french'
    WHEN 'de' THEN 'pg_catalog.german'
    WHEN 'el' THEN 'pg_catalog.greek'
    WHEN 'hi' THEN 'pg_catalog.hindi'
    WHEN 'hu' THEN 'pg_catalog.hungarian'
    WHEN 'id' THEN 'pg_catalog.indonesian'
    WHEN 'ga' THEN 'pg_catalog.irish'
    WHEN 'it' THEN 'pg_catalog.italian'
    WHEN 'lt' THEN 'pg_catalog.lithuanian'
    WHEN 'ne' THEN 'pg_catalog.nepali'
    WHEN 'no' THEN 'pg_catalog.norwegian'
    WHEN 'nb' THEN 'pg_catalog.norwegian'
    WHEN 'nn' THEN 'pg_catalog.norwegian'
    WHEN 'pt' THEN 'pg_catalog.portuguese'
    WHEN 'ro' THEN 'pg_catalog.romanian'
    WHEN 'ru' THEN 'pg_catalog.russian'
    WHEN 'sr' THEN 'pg_catalog.serbian'
    WHEN 'es' THEN 'pg_catalog.spanish'
    WHEN 'sv' THEN 'pg_catalog.swedish'
    WHEN 'ta' THEN 'pg_catalog.tamil'
    WHEN 'tr' THEN 'pg_catalog.turkish'
    WHEN 'yi' THEN 'pg_catalog.yiddish'
    ELSE 'pg_catalog.simple'
END::regconfig
$$;

-- The weighted vector of a note: title A, tags B, body C.
CREATE FUNCTION corpus_note_tsv(lang text, title text, body text, tags text[]) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT setweight(to_tsvector(corpus_ts_config(lang), coalesce(title, '')), 'A')
    || setweight(to_tsvector(corpus_ts_config(lang), coalesce(array_to_string(tags, ' '), '')), 'B')
    || setweight(to_tsvector(corpus_ts_config(lang), coalesce(body, '')), 'C')
$$;

-- events: emit
CREATE TABLE corpus_notes (
    id             uuid        PRIMARY KEY,
    owner_id       uuid        NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    genre          text        NOT NULL CHECK (genre IN ('wiki', 'writing', 'journal', 'raw')),
    title          text        NOT NULL DEFAULT '',
    body           text        NOT NULL DEFAULT '',
    tags           text[]      NOT NULL DEFAULT '{}',
    parent_id      uuid,
    published      boolean     NOT NULL DEFAULT false,
    show_as_source boolean     NOT NULL DEFAULT false,
    aliases        text[]      NOT NULL DEFAULT '{}',
    excerpt        text        NOT NULL DEFAULT '',
    slug           text        NOT NULL DEFAULT '',
    archived       boolean     NOT NULL DEFAULT false,
    css_classes    text[]      NOT NULL DEFAULT '{}',
    lang           text        NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    -- Admin search reads these (drafts and raw included).
    search_config  regconfig   GENERATED ALWAYS AS (corpus_ts_config(lang)) STORED,
    search_tsv     tsvector    GENERATED ALWAYS AS (corpus_note_tsv(lang, title, body, tags)) STORED,
    CONSTRAINT corpus_notes_raw_unpublished CHECK (genre <> 'raw' OR NOT published),
    CONSTRAINT corpus_notes_not_own_parent CHECK (parent_id IS DISTINCT FROM id),
    CONSTRAINT corpus_notes_owner_id_key UNIQUE (owner_id, id),
    -- A parent belongs to the same owner. No cascade: the delete use case
    -- removes a subtree deepest first, so each row's trigger still finds its
    -- parent chain.
    CONSTRAINT corpus_notes_parent_fkey FOREIGN KEY (owner_id, parent_id) REFERENCES corpus_notes (owner_id, id)
);
CREATE INDEX corpus_notes_parent_idx ON corpus_notes (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX corpus_notes_owner_created_idx ON corpus_notes (owner_id, created_at DESC, id DESC);
CREATE INDEX corpus_notes_search_idx ON corpus_notes USING gin (search_tsv);

-- The segment rule, generated with internal/corpus/gen_segment_table.go from
-- the same explicit tables as corpus.PathSegment (TestSQLPathSegmentMatchesGo
-- proves they agree). It uses no locale-dependent function (no lower(), no
-- [[:alpha:]]), so it gives the same answer on every database. The case table
-- is applied one Unicode block at a time, and only to input holding a
-- character of that block: translate() costs input length x table length.
CREATE FUNCTION corpus_path_segment(input text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
    s text := input;
BEGIN
    IF s ~ '[\u0041-\u005A]' THEN
        s := translate(s,
            E'\u0041\u0042\u0043\u0044\u0045\u0046\u0047\u0048\u0049\u004A\u004B\u004C\u004D\u004E\u004F\u0050'
            || E'\u0051\u0052\u0053\u0054\u0055\u0056\u0057\u0058\u0059\u005A',
            E'\u0061\u0062\u0063\u0064\u0065\u0066\u0067\u0068\u0069\u006A\u006B\u006C\u006D\u006E\u006F\u0070'
            || E'\u0071\u0072\u0073\u0074\u0075\u0076\u0077\u0078\u0079\u007A');
    END IF;
    IF s ~ '[\u00C0-\u00FF]' THEN
        s := translate(s,
            E'\u00C0\u00C1\u00C2\u00C3\u00C4\u00C5\u00C6\u00C7\u00C8\u00C9\u00CA\u00CB\u00CC\u00CD\u00CE\u00CF'
            || E'\u00D0\u00D1\u00D2\u00D3\u00D4\u00D5\u00D6\u00D8\u00D9\u00DA\u00DB\u00DC\u00DD\u00DE',
            E'\u00E0\u00E1\u00E2\u00E3\u00E4\u00E5\u00E6\u00E7\u00E8\u00E9\u00EA\u00EB\u00EC\u00ED\u00EE\u00EF'
            || E'\u00F0\u00F1\u00F2\u00F3\u00F4\u00F5\u00F6\u00F8\u00F9\u00FA\u00FB\u00FC\u00FD\u00FE');
    END IF;
    IF s ~ '[\u0100-\u017F]' THEN
        s := translate(s,
            E'\u0100\u0102\u0104\u0106\u0108\u010A\u010C\u010E\u0110\u0112\u0114\u0116\u0118\u011A\u011C\u011E'
            || E'\u0120\u0122\u0124\u0126\u0128\u012A\u012C\u012E\u0130\u0132\u0134\u0136\u0139\u013B\u013D\u013F'
            || E'\u0141\u0143\u0145\u0147\u014A\u014C\u014E\u0150\u0152\u0154\u0156\u0158\u015A\u015C\u015E\u0160'
            || E'\u0162\u0164\u0166\u0168\u016A\u016C\u016E\u0170\u0172\u0174\u0176\u0178\u0179\u017B\u017D',
            E'\u0101\u0103\u0105\u0107\u0109\u010B\u010D\u010F\u0111\u0113\u0115\u0117\u0119\u011B\u011D\u011F'
            || E'\u0121\u0123\u0125\u0127\u0129\u012B\u012D\u012F\u0069\u0133\u0135\u0137\u013A\u013C\u013E\u0140'
            || E'\u0142\u0144\u0146\u0148\u014B\u014D\u014F\u0151\u0153\u0155\u0157\u0159\u015B\u015D\u015F\u0161'
            || E'\u0163\u0165\u0167\u0169\u016B\u016D\u016F\u0171\u0173\u0175\u0177\u00FF\u017A\u017C\u017E');
    END IF;
    IF s ~ '[\u0180-\u024F]' THEN
        s := translate(s,
            E'\u0182\u0184\u0187\u018B\u018E\u0191\u0198\u01A0\u01A2\u01A4\u01A7\u01AC\u01AF\u01B3\u01B5\u01B8'
            || E'\u01BC\u01C4\u01C5\u01C7\u01C8\u01CA\u01CB\u01CD\u01CF\u01D1\u01D3\u01D5\u01D7\u01D9\u01DB\u01DE'
            || E'\u01E0\u01E2\u01E4\u01E6\u01E8\u01EA\u01EC\u01EE\u01F1\u01F2\u01F4\u01F6\u01F7\u01F8\u01FA\u01FC'
            || E'\u01FE\u0200\u0202\u0204\u0206\u0208\u020A\u020C\u020E\u0210\u0212\u0214\u0216\u0218\u021A\u021C'
            || E'\u021E\u0220\u0222\u0224\u0226\u0228\u022A\u022C\u022E\u0230\u0232\u023B\u023D\u0241\u0243\u0246'
            || E'\u0248\u024A\u024C\u024E',
            E'\u0183\u0185\u0188\u018C\u01DD\u0192\u0199\u01A1\u01A3\u01A5\u01A8\u01AD\u01B0\u01B4\u01B6\u01B9'
            || E'\u01BD\u01C6\u01C6\u01C9\u01C9\u01CC\u01CC\u01CE\u01D0\u01D2\u01D4\u01D6\u01D8\u01DA\u01DC\u01DF'
            || E'\u01E1\u01E3\u01E5\u01E7\u01E9\u01EB\u01ED\u01EF\u01F3\u01F3\u01F5\u0195\u01BF\u01F9\u01FB\u01FD'
            || E'\u01FF\u0201\u0203\u0205\u0207\u0209\u020B\u020D\u020F\u0211\u0213\u0215\u0217\u0219\u021B\u021D'
            || E'\u021F\u019E\u0223\u0225\u0227\u0229\u022B\u022D\u022F\u0231\u0233\u023C\u019A\u0242\u0180\u0247'
            || E'\u0249\u024B\u024D\u024F');
    END IF;
    IF s ~ '[\u0370-\u03FF]' THEN
        s := translate(s,
            E'\u0370\u0372\u0376\u037F\u0386\u0388\u0389\u038A\u038C\u038E\u038F\u0391\u0392\u0393\u0394\u0395'
            || E'\u0396\u0397\u0398\u0399\u039A\u039B\u039C\u039D\u039E\u039F\u03A0\u03A1\u03A3\u03A4\u03A5\u03A6'
            || E'\u03A7\u03A8\u03A9\u03AA\u03AB\u03CF\u03D8\u03DA\u03DC\u03DE\u03E0\u03E2\u03E4\u03E6\u03E8\u03EA'
            || E'\u03EC\u03EE\u03F4\u03F7\u03F9\u03FA\u03FD\u03FE\u03FF',
            E'\u0371\u0373\u0377\u03F3\u03AC\u03AD\u03AE\u03AF\u03CC\u03CD\u03CE\u03B1\u03B2\u03B3\u03B4\u03B5'
            || E'\u03B6\u03B7\u03B8\u03B9\u03BA\u03BB\u03BC\u03BD\u03BE\u03BF\u03C0\u03C1\u03C3\u03C4\u03C5\u03C6'
            || E'\u03C7\u03C8\u03C9\u03CA\u03CB\u03D7\u03D9\u03DB\u03DD\u03DF\u03E1\u03E3\u03E5\u03E7\u03E9\u03EB'
            || E'\u03ED\u03EF\u03B8\u03F8\u03F2\u03FB\u037B\u037C\u037D');
    END IF;
    IF s ~ '[\u0400-\u04FF]' THEN
        s := translate(s,
            E'\u0400\u0401\u0402\u0403\u0404\u0405\u0406\u0407\u0408\u0409\u040A\u040B\u040C\u040D\u040E\u040F'
            || E'\u0410\u0411\u0412\u0413\u0414\u0415\u0416\u0417\u0418\u0419\u041A\u041B\u041C\u041D\u041E\u041F'
            || E'\u0420\u0421\u0422\u0423\u0424\u0425\u0426\u0427\u0428\u0429\u042A\u042B\u042C\u042D\u042E\u042F'
            || E'\u0460\u0462\u0464\u0466\u0468\u046A\u046C\u046E\u0470\u0472\u0474\u0476\u0478\u047A\u047C\u047E'
            || E'\u0480\u048A\u048C\u048E\u0490\u0492\u0494\u0496\u0498\u049A\u049C\u049E\u04A0\u04A2\u04A4\u04A6'
            || E'\u04A8\u04AA\u04AC\u04AE\u04B0\u04B2\u04B4\u04B6\u04B8\u04BA\u04BC\u04BE\u04C0\u04C1\u04C3\u04C5'
            || E'\u04C7\u04C9\u04CB\u04CD\u04D0\u04D2\u04D4\u04D6\u04D8\u04DA\u04DC\u04DE\u04E0\u04E2\u04E4\u04E6'
            || E'\u04E8\u04EA\u04EC\u04EE\u04F0\u04F2\u04F4\u04F6\u04F8\u04FA\u04FC\u04FE',
            E'\u0450\u0451\u0452\u0453\u0454\u0455\u0456\u0457\u0458\u0459\u045A\u045B\u045C\u045D\u045E\u045F'
            || E'\u0430\u0431\u0432\u0433\u0434\u0435\u0436\u0437\u0438\u0439\u043A\u043B\u043C\u043D\u043E\u043F'
            || E'\u0440\u0441\u0442\u0443\u0444\u0445\u0446\u0447\u0448\u0449\u044A\u044B\u044C\u044D\u044E\u044F'
            || E'\u0461\u0463\u0465\u0467\u0469\u046B\u046D\u046F\u0471\u0473\u0475\u0477\u0479\u047B\u047D\u047F'
            || E'\u0481\u048B\u048D\u048F\u0491\u0493\u0495\u0497\u0499\u049B\u049D\u049F\u04A1\u04A3\u04A5\u04A7'
            || E'\u04A9\u04AB\u04AD\u04AF\u04B1\u04B3\u04B5\u04B7\u04B9\u04BB\u04BD\u04BF\u04CF\u04C2\u04C4\u04C6'
            || E'\u04C8\u04CA\u04CC\u04CE\u04D1\u04D3\u04D5\u04D7\u04D9\u04DB\u04DD\u04DF\u04E1\u04E3\u04E5\u04E7'
            || E'\u04E9\u04EB\u04ED\u04EF\u04F1\u04F3\u04F5\u04F7\u04F9\u04FB\u04FD\u04FF');
    END IF;
    IF s ~ '[\u0500-\u052F]' THEN
        s := translate(s,
            E'\u0500\u0502\u0504\u0506\u0508\u050A\u050C\u050E\u0510\u0512\u0514\u0516\u0518\u051A\u051C\u051E'
            || E'\u0520\u0522\u0524\u0526\u0528\u052A\u052C\u052E',
            E'\u0501\u0503\u0505\u0507\u0509\u050B\u050D\u050F\u0511\u0513\u0515\u0517\u0519\u051B\u051D\u051F'
            || E'\u0521\u0523\u0525\u0527\u0529\u052B\u052D\u052F');
    END IF;
    IF s ~ '[\u0530-\u058F]' THEN
        s := translate(s,
            E'\u0531\u0532\u0533\u0534\u0535\u0536\u0537\u0538\u0539\u053A\u053B\u053C\u053D\u053E\u053F\u0540'
            || E'\u0541\u0542\u0543\u0544\u0545\u0546\u0547\u0548\u0549\u054A\u054B\u054C\u054D\u054E\u054F\u0550'
            || E'\u0551\u0552\u0553\u0554\u0555\u0556',
            E'\u0561\u0562\u0563\u0564\u0565\u0566\u0567\u0568\u0569\u056A\u056B\u056C\u056D\u056E\u056F\u0570'
            || E'\u0571\u0572\u0573\u0574\u0575\u0576\u0577\u0578\u0579\u057A\u057B\u057C\u057D\u057E\u057F\u0580'
            || E'\u0581\u0582\u0583\u0584\u0585\u0586');
    END IF;
    IF s ~ '[\u1E00-\u1EFF]' THEN
        s := translate(s,
            E'\u1E00\u1E02\u1E04\u1E06\u1E08\u1E0A\u1E0C\u1E0E\u1E10\u1E12\u1E14\u1E16\u1E18\u1E1A\u1E1C\u1E1E'
            || E'\u1E20\u1E22\u1E24\u1E26\u1E28\u1E2A\u1E2C\u1E2E\u1E30\u1E32\u1E34\u1E36\u1E38\u1E3A\u1E3C\u1E3E'
            || E'\u1E40\u1E42\u1E44\u1E46\u1E48\u1E4A\u1E4C\u1E4E\u1E50\u1E52\u1E54\u1E56\u1E58\u1E5A\u1E5C\u1E5E'
            || E'\u1E60\u1E62\u1E64\u1E66\u1E68\u1E6A\u1E6C\u1E6E\u1E70\u1E72\u1E74\u1E76\u1E78\u1E7A\u1E7C\u1E7E'
            || E'\u1E80\u1E82\u1E84\u1E86\u1E88\u1E8A\u1E8C\u1E8E\u1E90\u1E92\u1E94\u1E9E\u1EA0\u1EA2\u1EA4\u1EA6'
            || E'\u1EA8\u1EAA\u1EAC\u1EAE\u1EB0\u1EB2\u1EB4\u1EB6\u1EB8\u1EBA\u1EBC\u1EBE\u1EC0\u1EC2\u1EC4\u1EC6'
            || E'\u1EC8\u1ECA\u1ECC\u1ECE\u1ED0\u1ED2\u1ED4\u1ED6\u1ED8\u1EDA\u1EDC\u1EDE\u1EE0\u1EE2\u1EE4\u1EE6'
            || E'\u1EE8\u1EEA\u1EEC\u1EEE\u1EF0\u1EF2\u1EF4\u1EF6\u1EF8\u1EFA\u1EFC\u1EFE',
            E'\u1E01\u1E03\u1E05\u1E07\u1E09\u1E0B\u1E0D\u1E0F\u1E11\u1E13\u1E15\u1E17\u1E19\u1E1B\u1E1D\u1E1F'
            || E'\u1E21\u1E23\u1E25\u1E27\u1E29\u1E2B\u1E2D\u1E2F\u1E31\u1E33\u1E35\u1E37\u1E39\u1E3B\u1E3D\u1E3F'
            || E'\u1E41\u1E43\u1E45\u1E47\u1E49\u1E4B\u1E4D\u1E4F\u1E51\u1E53\u1E55\u1E57\u1E59\u1E5B\u1E5D\u1E5F'
            || E'\u1E61\u1E63\u1E65\u1E67\u1E69\u1E6B\u1E6D\u1E6F\u1E71\u1E73\u1E75\u1E77\u1E79\u1E7B\u1E7D\u1E7F'
            || E'\u1E81\u1E83\u1E85\u1E87\u1E89\u1E8B\u1E8D\u1E8F\u1E91\u1E93\u1E95\u00DF\u1EA1\u1EA3\u1EA5\u1EA7'
            || E'\u1EA9\u1EAB\u1EAD\u1EAF\u1EB1\u1EB3\u1EB5\u1EB7\u1EB9\u1EBB\u1EBD\u1EBF\u1EC1\u1EC3\u1EC5\u1EC7'
            || E'\u1EC9\u1ECB\u1ECD\u1ECF\u1ED1\u1ED3\u1ED5\u1ED7\u1ED9\u1EDB\u1EDD\u1EDF\u1EE1\u1EE3\u1EE5\u1EE7'
            || E'\u1EE9\u1EEB\u1EED\u1EEF\u1EF1\u1EF3\u1EF5\u1EF7\u1EF9\u1EFB\u1EFD\u1EFF');
    END IF;
    RETURN rtrim(left(btrim(regexp_replace(s,
        '[^' || '\u0030-\u0039\u0041-\u005A\u0061-\u007A\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u024F\u0300-\u0374\u0376-\u0377'
        || '\u037A-\u037D\u037F\u0386\u0388-\u038A\u038C\u038E-\u03A1\u03A3-\u03F5\u03F7-\u0481'
        || '\u0483-\u0487\u048A-\u052F\u0531-\u0556\u0559\u0560-\u0588\u0591-\u05BD\u05BF\u05C1-\u05C2'
        || '\u05C4-\u05C5\u05C7\u05D0-\u05EA\u05EF-\u05F2\u0610-\u061A\u0620-\u0669\u066E-\u06D3\u06D5-\u06DC'
        || '\u06DF-\u06E8\u06EA-\u06FC\u06FF\u0900-\u0963\u0966-\u096F\u0971-\u097F\u0E01-\u0E3A\u0E40-\u0E4E'
        || '\u0E50-\u0E59\u10A0-\u10C5\u10C7\u10CD\u10D0-\u10FA\u10FC-\u10FF\u1E00-\u1EFF\u3041-\u3096'
        || '\u3099-\u309A\u309D-\u309F\u30A1-\u30FA\u30FC-\u30FF\u3400-\u4DBF\u4E00-\u9FFF\uAC00-\uD7A3' || ']+',
        '-', 'g'), '-'), 80), '-');
END;
$$;

-- A note's own segment: its slug's, else its title's, else its id
-- (corpus.NoteSegment).
CREATE FUNCTION corpus_note_segment(note_id uuid, slug text, title text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT coalesce(nullif(corpus_path_segment(slug), ''), nullif(corpus_path_segment(title), ''), note_id::text)
$$;

-- The path of an existing note: its ancestors' segments, root first, then
-- its own. NULL for a NULL or unknown id. Depth is bounded so even a corrupt
-- cycle cannot loop. PL/pgSQL rather than SQL because PL/pgSQL keeps the
-- query's plan for the session, while a non-inlinable SQL function is parsed
-- and planned again on every call (with the segment rule inlined into it),
-- which the row trigger would pay on every row it handles.
CREATE FUNCTION corpus_note_path(note_id uuid) RETURNS text
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
BEGIN
    IF note_id IS NULL THEN
        RETURN NULL;
    END IF;
    RETURN (
        WITH RECURSIVE chain (id, parent_id, seg, depth) AS (
            SELECT n.id, n.parent_id, corpus_note_segment(n.id, n.slug, n.title), 1
            FROM corpus_notes n WHERE n.id = note_id
            UNION ALL
            SELECT p.id, p.parent_id, corpus_note_segment(p.id, p.slug, p.title), c.depth + 1
            FROM chain c JOIN corpus_notes p ON p.id = c.parent_id
            WHERE c.depth < 64
        )
        SELECT string_agg(chain.seg, '/' ORDER BY chain.depth DESC) FROM chain);
END;
$$;

-- The URI of a note described by its values, under a parent that exists.
-- The trigger uses it with OLD for a delete (the row is gone, its parent chain
-- is not) and stores use it in RETURNING (where the row itself is not yet
-- visible to a query).
CREATE FUNCTION corpus_uri_of(genre text, parent_id uuid, note_id uuid, slug text, title text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
SELECT genre || '://' || concat_ws('/', corpus_note_path(parent_id), corpus_note_segment(note_id, slug, title))
$$;

-- The URI of an existing note: "<genre>://<path>" (corpus.URI).
CREATE FUNCTION corpus_note_uri(note_id uuid) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
SELECT corpus_uri_of(n.genre, n.parent_id, n.id, n.slug, n.title) FROM corpus_notes n WHERE n.id = note_id
$$;

-- The row trigger: one corpus.note.changed event per created, deleted or
-- watched-column-changed note, in the writing transaction, and a wake-up for
-- the relay (delivered at commit, coalesced per transaction).
CREATE FUNCTION corpus_notes_emit() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    n             corpus_notes;
    op            text;
    published     boolean;
    was_published boolean := false;
    path_changed  boolean := false;
BEGIN
    IF TG_OP = 'DELETE' THEN
        n := OLD;
        op := 'deleted';
        published := false;
        was_published := OLD.published;
    ELSIF TG_OP = 'INSERT' THEN
        n := NEW;
        op := 'created';
        published := NEW.published;
    ELSE
        n := NEW;
        op := 'updated';
        published := NEW.published;
        was_published := OLD.published;
        -- The path below the note changed: every descendant's URI did too.
        path_changed := OLD.parent_id IS DISTINCT FROM NEW.parent_id
            OR corpus_note_segment(OLD.id, OLD.slug, OLD.title) <> corpus_note_segment(NEW.id, NEW.slug, NEW.title);
    END IF;
    INSERT INTO events (owner_id, type, subject, data)
    VALUES (n.owner_id, 'corpus.note.changed',
            corpus_uri_of(n.genre, n.parent_id, n.id, n.slug, n.title),
            jsonb_build_object(
                'op', op,
                'note_id', n.id,
                'genre', n.genre,
                'parent_id', n.parent_id,
                'published', published,
                'was_published', was_published,
                'path_changed', path_changed));
    PERFORM pg_notify('standmeet_events', '');
    RETURN NULL;
END;
$$;

CREATE TRIGGER corpus_notes_emit_insert_delete
    AFTER INSERT OR DELETE ON corpus_notes
    FOR EACH ROW EXECUTE FUNCTION corpus_notes_emit();

-- Only a change of a watched column is an event: an update that touches
-- nothing else (updated_at alone, or every column set to its old value)
-- emits nothing.
CREATE TRIGGER corpus_notes_emit_update
    AFTER UPDATE ON corpus_notes
    FOR EACH ROW
    WHEN (OLD.genre IS DISTINCT FROM NEW.genre
       OR OLD.title IS DISTINCT FROM NEW.title
       OR OLD.body IS DISTINCT FROM NEW.body
       OR OLD.tags IS DISTINCT FROM NEW.tags
       OR OLD.parent_id IS DISTINCT FROM NEW.parent_id
       OR OLD.published IS DISTINCT FROM NEW.published
       OR OLD.show_as_source IS DISTINCT FROM NEW.show_as_source
       OR OLD.aliases IS DISTINCT FROM NEW.aliases
       OR OLD.excerpt IS DISTINCT FROM NEW.excerpt
       OR OLD.slug IS DISTINCT FROM NEW.slug
       OR OLD.archived IS DISTINCT FROM NEW.archived
       OR OLD.css_classes IS DISTINCT FROM NEW.css_classes
       OR OLD.lang IS DISTINCT FROM NEW.lang)
    EXECUTE FUNCTION corpus_notes_emit();
