CREATE TABLE widgets (id int PRIMARY KEY, name text NOT NULL);
