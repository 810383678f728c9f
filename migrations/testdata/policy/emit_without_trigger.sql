-- events: emit
CREATE TABLE loud (id int);
