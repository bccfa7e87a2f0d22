package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

func nowMs() int64 { return time.Now().UnixMilli() }

// Client is a row of clients.
type Client struct {
	ID             int64
	Name           string
	DocumentType   int
	DocumentNumber string // digits only
	Phone          string
	CEP            string
	Address        string
	AddressNumber  string
	AddressComp    string
	AddressNH      string
	City           string
	State          string
	CreateURL      string
	CreateIP       string
	Blocked        bool
	// AccessGen counts the client's blocks and unblocks; digests are
	// signed over it.
	AccessGen int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// User is a row of users.
type User struct {
	ID           int64
	ClientID     int64
	UserType     int // 1 COMUM, 2 ADMIN
	Name         string
	Email        string
	Phone        string
	PasswordHash string
	Blocked      bool
	// AccessGen counts the user's blocks and unblocks; player digests are
	// signed over it.
	AccessGen    int64
	UpdateUserID int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// NewUser is a user to create with its first token.
type NewUser struct {
	User
	TokenHash string
}

// CreateClient inserts c and its users (each with its first token) in one
// transaction and returns them with ids. A taken document number or e-mail
// wraps ErrDuplicate.
func (d *DB) CreateClient(ctx context.Context, c Client, users []NewUser) (Client, []User, error) {
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return Client{}, nil, err
	}
	defer func() { _ = tx.Rollback() }()
	ts := c.CreatedAt.UnixMilli()
	err = tx.QueryRowContext(ctx, d.q(`INSERT INTO clients (name, document_type, document_number, phone, cep, address,
		address_number, address_comp, address_nh, city, state, create_url, create_ip, blocked, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?) RETURNING id`),
		c.Name, c.DocumentType, c.DocumentNumber, c.Phone, c.CEP, c.Address, c.AddressNumber, c.AddressComp,
		c.AddressNH, c.City, c.State, c.CreateURL, c.CreateIP, ts, ts).Scan(&c.ID)
	if err != nil {
		return Client{}, nil, fmt.Errorf("create client: %w", classify(err))
	}
	c.UpdatedAt = c.CreatedAt
	out := make([]User, 0, len(users))
	for _, u := range users {
		u.ClientID = c.ID
		nu, err := d.insertUser(ctx, tx, u)
		if err != nil {
			return Client{}, nil, err
		}
		out = append(out, nu)
	}
	if err := tx.Commit(); err != nil {
		return Client{}, nil, classify(err)
	}
	return c, out, nil
}

// CreateUser inserts a user of an existing client with its first token.
func (d *DB) CreateUser(ctx context.Context, u NewUser) (User, error) {
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return User{}, err
	}
	defer func() { _ = tx.Rollback() }()
	out, err := d.insertUser(ctx, tx, u)
	if err != nil {
		return User{}, err
	}
	if err := tx.Commit(); err != nil {
		return User{}, classify(err)
	}
	return out, nil
}

func (d *DB) insertUser(ctx context.Context, tx *sql.Tx, u NewUser) (User, error) {
	ts := u.CreatedAt.UnixMilli()
	err := tx.QueryRowContext(ctx, d.q(`INSERT INTO users (client_id, user_type, name, email, phone, password_hash,
		blocked, update_user_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?) RETURNING id`),
		u.ClientID, u.UserType, u.Name, u.Email, u.Phone, u.PasswordHash, u.UpdateUserID, ts, ts).Scan(&u.ID)
	if err != nil {
		return User{}, fmt.Errorf("create user %s: %w", u.Email, classify(err))
	}
	if u.TokenHash != "" {
		if _, err := tx.ExecContext(ctx, d.q(`INSERT INTO user_tokens (user_id, token_hash, created_at) VALUES (?, ?, ?)`),
			u.ID, u.TokenHash, ts); err != nil {
			return User{}, fmt.Errorf("create user token: %w", classify(err))
		}
	}
	u.UpdatedAt = u.CreatedAt
	return u.User, nil
}

const clientCols = `id, name, document_type, document_number, phone, cep, address, address_number, address_comp,
	address_nh, city, state, create_url, create_ip, blocked, access_gen, created_at, updated_at`

func scanClient(sc interface{ Scan(...any) error }) (Client, error) {
	var c Client
	var blocked int
	var ca, ua int64
	err := sc.Scan(&c.ID, &c.Name, &c.DocumentType, &c.DocumentNumber, &c.Phone, &c.CEP, &c.Address, &c.AddressNumber,
		&c.AddressComp, &c.AddressNH, &c.City, &c.State, &c.CreateURL, &c.CreateIP, &blocked, &c.AccessGen, &ca, &ua)
	c.Blocked = blocked != 0
	c.CreatedAt, c.UpdatedAt = time.UnixMilli(ca), time.UnixMilli(ua)
	return c, classify(err)
}

// Client returns the client id.
func (d *DB) Client(ctx context.Context, id int64) (Client, error) {
	c, err := scanClient(d.queryRow(ctx, `SELECT `+clientCols+` FROM clients WHERE id = ?`, id))
	if err != nil {
		return Client{}, fmt.Errorf("client %d: %w", id, err)
	}
	return c, nil
}

// ClientByDocument returns the client with the document number (digits).
func (d *DB) ClientByDocument(ctx context.Context, doc string) (Client, error) {
	c, err := scanClient(d.queryRow(ctx, `SELECT `+clientCols+` FROM clients WHERE document_number = ?`, doc))
	if err != nil {
		return Client{}, fmt.Errorf("client with document: %w", err)
	}
	return c, nil
}

// SetClientBlocked blocks or unblocks the client and counts up its access
// generation.
func (d *DB) SetClientBlocked(ctx context.Context, id int64, blocked bool, at time.Time) error {
	_, err := d.exec(ctx, `UPDATE clients SET blocked = ?, access_gen = access_gen + 1, updated_at = ? WHERE id = ?`, boolInt(blocked), at.UnixMilli(), id)
	return err
}

const userCols = `id, client_id, user_type, name, email, phone, password_hash, blocked, access_gen, update_user_id, created_at, updated_at`

func scanUser(sc interface{ Scan(...any) error }) (User, error) {
	var u User
	var blocked int
	var ca, ua int64
	err := sc.Scan(&u.ID, &u.ClientID, &u.UserType, &u.Name, &u.Email, &u.Phone, &u.PasswordHash, &blocked, &u.AccessGen, &u.UpdateUserID, &ca, &ua)
	u.Blocked = blocked != 0
	u.CreatedAt, u.UpdatedAt = time.UnixMilli(ca), time.UnixMilli(ua)
	return u, classify(err)
}

// User returns the user id.
func (d *DB) User(ctx context.Context, id int64) (User, error) {
	u, err := scanUser(d.queryRow(ctx, `SELECT `+userCols+` FROM users WHERE id = ?`, id))
	if err != nil {
		return User{}, fmt.Errorf("user %d: %w", id, err)
	}
	return u, nil
}

// UserByEmail returns the user with the e-mail address (compared as stored,
// lower case).
func (d *DB) UserByEmail(ctx context.Context, email string) (User, error) {
	u, err := scanUser(d.queryRow(ctx, `SELECT `+userCols+` FROM users WHERE email = ?`, email))
	if err != nil {
		return User{}, fmt.Errorf("user by email: %w", err)
	}
	return u, nil
}

// UserByToken returns the user holding the token whose hash is given, and
// its client.
func (d *DB) UserByToken(ctx context.Context, tokenHash string) (User, Client, error) {
	u, err := scanUser(d.queryRow(ctx, `SELECT `+prefixCols("u.", userCols)+` FROM users u JOIN user_tokens t ON t.user_id = u.id WHERE t.token_hash = ?`, tokenHash))
	if err != nil {
		return User{}, Client{}, fmt.Errorf("user by token: %w", err)
	}
	c, err := d.Client(ctx, u.ClientID)
	return u, c, err
}

// AddToken stores one more token (its hash) for the user.
func (d *DB) AddToken(ctx context.Context, userID int64, tokenHash string, at time.Time) error {
	_, err := d.exec(ctx, `INSERT INTO user_tokens (user_id, token_hash, created_at) VALUES (?, ?, ?)`, userID, tokenHash, at.UnixMilli())
	return err
}

// SetUserBlocked blocks or unblocks the user and counts up its access
// generation; by is the id of the user who did it (0 for the operator).
func (d *DB) SetUserBlocked(ctx context.Context, id int64, blocked bool, by int64, at time.Time) error {
	res, err := d.exec(ctx, `UPDATE users SET blocked = ?, access_gen = access_gen + 1, update_user_id = ?, updated_at = ? WHERE id = ?`, boolInt(blocked), by, at.UnixMilli(), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("user %d: %w", id, ErrNotFound)
	}
	return nil
}
