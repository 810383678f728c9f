-- events: none
CREATE TABLE quiet (id int);
