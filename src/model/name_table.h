/*
 * src/model/name_table.h — a small open-addressing hash table from names to indices, so that building a
 * model of 100 000 bodies resolves parents in linear time. The table borrows the name strings.
 */
#ifndef SOADYN_NAME_TABLE_H
#define SOADYN_NAME_TABLE_H

typedef struct sd_name_table sd_name_table;

/* A table for up to `capacity` names; NULL when out of memory. */
sd_name_table *sd_name_table_new(int capacity);
void sd_name_table_free(sd_name_table *t);
/* Insert name -> index. Returns -1 when inserted, the existing index when the name is already
 * there (nothing changes), -2 when the table is full. */
int sd_name_table_insert(sd_name_table *t, const char *name, int index);
/* The index of a name, or -1. */
int sd_name_table_find(const sd_name_table *t, const char *name);

#endif /* SOADYN_NAME_TABLE_H */
