-- events: none (fine)
CREATE TABLE fine (id int);

CREATE TABLE forgotten (id int);
