package main

// GORM (over pgx v5 through gorm.io/driver/postgres) against the server:
// AutoMigrate creates tables with keys, unique and plain indexes, defaults,
// a foreign key with ON DELETE / ON UPDATE actions and a many-to-many join
// table, and run again it changes nothing: it reads information_schema and
// pg_catalog (columns with their types, lengths, defaults and comments,
// unique constraints, indexes) and finds every column as it declared it. A
// changed model migrates with exactly the ALTERs it needs. Then the ORM
// scenario: create with associations, preload, update, soft delete,
// transactions that commit and roll back, and a unique violation read by
// SQLSTATE.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

type GormCompany struct {
	ID   uint
	Name string `gorm:"size:100;not null;uniqueIndex"`
}

type GormUser struct {
	ID        uint    `gorm:"primaryKey"`
	Name      string  `gorm:"size:64;not null;index"`
	Email     *string `gorm:"uniqueIndex"`
	Age       uint8   `gorm:"default:18"`
	Balance   float64 `gorm:"type:numeric(12,2);default:0"`
	Active    bool    `gorm:"default:true"`
	Birthday  *time.Time
	CompanyID *uint
	Company   GormCompany `gorm:"constraint:OnUpdate:CASCADE,OnDelete:SET NULL;"`
	Tags      []GormTag   `gorm:"many2many:gorm_user_tags;"`
	Note      string      `gorm:"comment:free text"`
	CreatedAt time.Time
	UpdatedAt time.Time
	DeletedAt gorm.DeletedAt `gorm:"index"`
}

type GormTag struct {
	ID   uint
	Name string `gorm:"size:30;unique"`
}

// GormUserV2 is the next version of the users model: a longer name, a new
// default for age and a new indexed column.
type GormUserV2 struct {
	ID        uint    `gorm:"primaryKey"`
	Name      string  `gorm:"size:128;not null;index"`
	Email     *string `gorm:"uniqueIndex"`
	Age       uint8   `gorm:"default:21"`
	Balance   float64 `gorm:"type:numeric(12,2);default:0"`
	Active    bool    `gorm:"default:true"`
	Birthday  *time.Time
	CompanyID *uint
	Note      string `gorm:"comment:free text"`
	Nickname  string `gorm:"size:40;index:idx_gorm_nick"`
	CreatedAt time.Time
	UpdatedAt time.Time
	DeletedAt gorm.DeletedAt `gorm:"index"`
}

func (GormUserV2) TableName() string { return "gorm_users" }

// sqlLog keeps the statements GORM sends.
type sqlLog struct {
	logger.Interface
	mu   sync.Mutex
	stmt []string
}

func (l *sqlLog) Trace(_ context.Context, _ time.Time, fc func() (string, int64), _ error) {
	sql, _ := fc()
	l.mu.Lock()
	l.stmt = append(l.stmt, sql)
	l.mu.Unlock()
}

// take returns the statements logged since the last call with `prefix`.
func (l *sqlLog) take(prefix string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.stmt {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	l.stmt = nil
	return out
}

func TestGorm(t *testing.T) {
	check(t, "gorm_automigrate_and_orm", func(c *C) {
		log := &sqlLog{Interface: logger.Discard}
		db, err := gorm.Open(postgres.Open(connString()), &gorm.Config{
			Logger: log,
		})
		if err != nil {
			c.Fatalf("open: %v", err)
		}
		c.NoErr(db.Exec("drop table if exists gorm_user_tags, gorm_users, gorm_tags, gorm_companies cascade").Error, "drop")
		models := []any{&GormCompany{}, &GormUser{}, &GormTag{}}
		c.NoErr(db.AutoMigrate(models...), "first AutoMigrate")
		if created := log.take("CREATE TABLE"); len(created) != 4 {
			c.Fatalf("want 4 CREATE TABLE, got %d: %v", len(created), created)
		}
		// Run again, AutoMigrate finds every table, column, index and key as
		// the models declare them and sends no DDL.
		c.NoErr(db.AutoMigrate(models...), "second AutoMigrate")
		for _, s := range log.take("") {
			if strings.HasPrefix(s, "ALTER") || strings.HasPrefix(s, "CREATE") {
				c.Fatalf("second AutoMigrate changed the schema: %s", s)
			}
		}
		m := db.Migrator()
		for _, tc := range []struct {
			what string
			ok   bool
		}{
			{"users table", m.HasTable(&GormUser{})},
			{"join table", m.HasTable("gorm_user_tags")},
			{"email index", m.HasIndex(&GormUser{}, "Email")},
			{"company constraint", m.HasConstraint(&GormUser{}, "Company")},
			{"tag name unique", m.HasConstraint(&GormTag{}, "uni_gorm_tags_name") || m.HasIndex(&GormTag{}, "Name")},
		} {
			if !tc.ok {
				c.Fatalf("migrator does not find the %s", tc.what)
			}
		}

		// The ORM scenario.
		email := "ann@example.org"
		ann := GormUser{Name: "ann", Email: &email, Company: GormCompany{Name: "acme"}, Tags: []GormTag{{Name: "go"}, {Name: "db"}}}
		c.NoErr(db.Create(&ann).Error, "create with associations")
		var got GormUser
		c.NoErr(db.Preload("Company").Preload("Tags").First(&got, ann.ID).Error, "preload")
		if got.Name != "ann" || got.Age != 18 || !got.Active || got.Balance != 0 || got.Company.Name != "acme" || len(got.Tags) != 2 {
			c.Fatalf("read back %+v", got)
		}
		c.NoErr(db.Model(&got).Updates(map[string]any{"age": 31, "balance": 12.5}).Error, "update")
		var older []GormUser
		c.NoErr(db.Where("age > ?", 30).Order("name").Find(&older).Error, "query")
		if len(older) != 1 || older[0].Balance != 12.5 {
			c.Fatalf("age > 30: %+v", older)
		}
		// A unique violation, read by SQLSTATE.
		dup := GormUser{Name: "other", Email: &email}
		err = db.Create(&dup).Error
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23505" || pgErr.ConstraintName != "idx_gorm_users_email" {
			c.Fatalf("duplicate email: %v", err)
		}
		// A transaction that fails rolls back; one that succeeds commits.
		err = db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(&GormUser{Name: "bob"}).Error; err != nil {
				return err
			}
			return fmt.Errorf("give up")
		})
		if err == nil || err.Error() != "give up" {
			c.Fatalf("transaction: %v", err)
		}
		c.NoErr(db.Transaction(func(tx *gorm.DB) error {
			return tx.Create(&GormUser{Name: "carol"}).Error
		}), "transaction")
		var names []string
		c.NoErr(db.Model(&GormUser{}).Order("name").Pluck("name", &names).Error, "pluck")
		if strings.Join(names, ",") != "ann,carol" {
			c.Fatalf("names: %v", names)
		}
		// Soft delete hides the row from queries; Unscoped sees it.
		c.NoErr(db.Delete(&got).Error, "soft delete")
		var n, all int64
		c.NoErr(db.Model(&GormUser{}).Count(&n).Error, "count")
		c.NoErr(db.Unscoped().Model(&GormUser{}).Count(&all).Error, "unscoped count")
		if n != 1 || all != 2 {
			c.Fatalf("count %d, unscoped %d", n, all)
		}
		// Deleting the company sets the user's company_id to NULL.
		c.NoErr(db.Exec("delete from gorm_companies").Error, "delete company")
		var orphan GormUser
		c.NoErr(db.Unscoped().First(&orphan, ann.ID).Error, "reread")
		if orphan.CompanyID != nil {
			c.Fatalf("ON DELETE SET NULL: company_id %v", *orphan.CompanyID)
		}

		// The next model version migrates with exactly the needed ALTERs, and
		// then with none.
		log.take("")
		c.NoErr(db.AutoMigrate(&GormUserV2{}), "AutoMigrate v2")
		alters := log.take("ALTER")
		want := []string{
			`ALTER TABLE "gorm_users" ALTER COLUMN "name" TYPE varchar(128) USING "name"::varchar(128)`,
			`ALTER TABLE "gorm_users" ALTER COLUMN "age" SET DEFAULT 21`,
			`ALTER TABLE "gorm_users" ADD "nickname" varchar(40)`,
		}
		if strings.Join(alters, "\n") != strings.Join(want, "\n") {
			c.Fatalf("v2 ALTERs:\n%s\nwant:\n%s", strings.Join(alters, "\n"), strings.Join(want, "\n"))
		}
		c.NoErr(db.AutoMigrate(&GormUserV2{}), "AutoMigrate v2 again")
		if again := log.take("ALTER"); len(again) != 0 {
			c.Fatalf("v2 again: %v", again)
		}
		cols, err := db.Migrator().ColumnTypes("gorm_users")
		c.NoErr(err, "column types")
		seen := map[string]string{}
		for _, col := range cols {
			length, _ := col.Length()
			nullable, _ := col.Nullable()
			def, _ := col.DefaultValue()
			comment, _ := col.Comment()
			seen[col.Name()] = fmt.Sprintf("%s %d %v %s %s", col.DatabaseTypeName(), length, nullable, def, comment)
		}
		for name, want := range map[string]string{
			"name":     "varchar 128 false  ",
			"age":      "int2 16 true 21 ",
			"balance":  "numeric 0 true 0 ",
			"active":   "bool 8 true true ",
			"nickname": "varchar 40 true  ",
			"note":     "text 9223372036854775807 true  free text",
		} {
			if seen[name] != want {
				c.Fatalf("column %s: got %q, want %q", name, seen[name], want)
			}
		}
		c.NoErr(db.Exec("drop table gorm_user_tags, gorm_users, gorm_tags, gorm_companies cascade").Error, "drop")
	})
}
