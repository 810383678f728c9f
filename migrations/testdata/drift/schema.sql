-- events: none (fixture)
CREATE TABLE widgets (id int PRIMARY KEY, name text NOT NULL);
CREATE INDEX widgets_name_idx ON widgets (name);
