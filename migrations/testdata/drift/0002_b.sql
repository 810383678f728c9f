ALTER TABLE widgets ADD COLUMN colour text;
CREATE INDEX widgets_name_idx ON widgets (name);
