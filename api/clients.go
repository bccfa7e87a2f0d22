package api

import (
	"context"
	"errors"
	"net/http"
	"net/mail"
	"strconv"
	"strings"

	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/status"
)

// Length limits of text fields (the spec leaves them open).
const (
	maxName     = 255
	maxShort    = 64
	maxText     = 255
	maxPassword = 72 // bcrypt reads at most 72 bytes
	minPassword = 8
)

// userTypeClient is the user_type_id returned for users of a client.
const userTypeClient = 6

// clientRecord is a client in responses (spec 2.1).
type clientRecord struct {
	ID             int64        `json:"id"`
	Name           string       `json:"name"`
	DocumentType   string       `json:"document_type"`
	DocumentNumber string       `json:"document_number"`
	Phone          string       `json:"phone"`
	CEP            string       `json:"cep"`
	Address        string       `json:"address"`
	AddressNumber  string       `json:"address_number"`
	AddressComp    string       `json:"address_comp"`
	AddressNH      string       `json:"address_nh"`
	City           string       `json:"city"`
	State          string       `json:"state"`
	CreateURL      string       `json:"create_url"`
	CreateIP       string       `json:"create_ip"`
	CreatedAt      string       `json:"created_at"`
	UpdatedAt      string       `json:"updated_at"`
	Users          []userRecord `json:"users,omitempty"`
}

// userRecord is a user in responses (spec 2.2).
type userRecord struct {
	ID           int64  `json:"id"`
	UserTypeID   int    `json:"user_type_id"`
	Name         string `json:"name"`
	Email        string `json:"email"`
	Phone        string `json:"phone"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
	UpdateUserID int64  `json:"update_user_id"`
	APIToken     string `json:"api_token,omitempty"`
}

func (s *Server) userRecord(u db.User, token string) userRecord {
	return userRecord{ID: u.ID, UserTypeID: userTypeClient, Name: u.Name, Email: u.Email, Phone: u.Phone,
		CreatedAt: s.fmtTime(u.CreatedAt, layoutDateTime), UpdatedAt: s.fmtTime(u.UpdatedAt, layoutDateTime),
		UpdateUserID: u.UpdateUserID, APIToken: token}
}

// userInput reads and checks the fields of a user to create.
func (s *Server) userInput(f *fields) (db.NewUser, string) {
	var u db.NewUser
	u.Name = f.str("name", true, maxName)
	email := strings.ToLower(f.str("email", true, maxText))
	if email != "" {
		if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
			f.errs.add(f.name("email"), "must be a valid e-mail address")
		}
	}
	u.Email = email
	u.Phone = f.str("phone", true, maxShort)
	if t, ok := f.oneOf("user_type", true, []int{1, 2}); ok {
		u.UserType = t
	}
	pass := f.rawStr("password", true, maxPassword)
	conf := f.rawStr("password_conf", true, maxPassword)
	if pass != "" && len(pass) < minPassword {
		f.errs.add(f.name("password"), "must be at least "+strconv.Itoa(minPassword)+" characters")
	}
	if pass != "" && conf != "" && pass != conf {
		f.errs.add(f.name("password_conf"), "must equal password")
	}
	return u, pass
}

// hashPassword fills u's password hash and creation time.
func (s *Server) hashPassword(u *db.NewUser, pass string) error {
	h, err := bcrypt.GenerateFromPassword([]byte(pass), s.cfg.PasswordCost)
	if err != nil {
		return err
	}
	u.PasswordHash = string(h)
	u.CreatedAt = s.now()
	return nil
}

// createClient is POST /api/v1/clients.
func (s *Server) createClient(w http.ResponseWriter, r *http.Request) error {
	in, err := s.readInput(w, r)
	if err != nil {
		return err
	}
	if err := s.operatorOnly(r, in); err != nil {
		return err
	}
	errs := fieldErrors{}
	f := newFields(in, errs)
	c := db.Client{
		Name: f.str("name", true, maxName), Phone: f.str("phone", true, maxShort), CEP: f.str("cep", true, maxShort),
		Address: f.str("address", true, maxText), AddressNumber: f.str("address_number", true, maxShort),
		AddressComp: f.str("address_comp", false, maxText), AddressNH: f.str("address_nh", true, maxText),
		City: f.str("city", true, maxText), State: f.str("state", true, maxShort),
	}
	docType, okType := f.oneOf("document_type", true, []int{docCPF, docCNPJ})
	doc := digitsOnly(f.str("document_number", true, maxShort))
	if okType && f.present("document_number") {
		switch {
		case docType == docCPF && !ValidCPF(doc):
			errs.add("document_number", "must be a valid CPF")
		case docType == docCNPJ && !ValidCNPJ(doc):
			errs.add("document_number", "must be a valid CNPJ")
		}
	}
	c.DocumentType, c.DocumentNumber = docType, doc
	var users []db.NewUser
	var passwords []string
	list, isList := in["users"].([]any)
	switch {
	case !f.present("users"):
		errs.add("users", "is required")
	case !isList || len(list) == 0:
		errs.add("users", "must be a non-empty list of users")
	default:
		seen := map[string]bool{}
		for i, item := range list {
			obj, ok := item.(map[string]any)
			prefix := "users." + strconv.Itoa(i) + "."
			if !ok {
				errs.add(strings.TrimSuffix(prefix, "."), "must be an object")
				continue
			}
			u, pass := s.userInput(&fields{in: obj, prefix: prefix, errs: errs})
			if u.Email != "" {
				if seen[u.Email] {
					errs.add(prefix+"email", "is given twice")
				}
				seen[u.Email] = true
				if _, err := s.cfg.DB.UserByEmail(r.Context(), u.Email); err == nil {
					errs.add(prefix+"email", "has already been taken")
				}
			}
			users, passwords = append(users, u), append(passwords, pass)
		}
	}
	if doc != "" {
		if _, err := s.cfg.DB.ClientByDocument(r.Context(), doc); err == nil {
			errs.add("document_number", "has already been taken")
		}
	}
	if err := errs.err(); err != nil {
		return err
	}
	tokens := make([]string, len(users))
	for i := range users {
		if err := s.hashPassword(&users[i], passwords[i]); err != nil {
			return err
		}
		if tokens[i], err = newToken(); err != nil {
			return err
		}
		users[i].TokenHash = hashToken(tokens[i])
	}
	c.CreatedAt = s.now()
	c.CreateURL = s.cfg.PublicURL + r.URL.Path
	if a := s.clientAddr(r); a.IsValid() {
		c.CreateIP = a.String()
	}
	c, created, err := s.cfg.DB.CreateClient(r.Context(), c, users)
	if errors.Is(err, db.ErrDuplicate) {
		return fieldErrors{"document_number": {"has already been taken, or an e-mail of users has"}}.err()
	}
	if err != nil {
		return err
	}
	rec := s.clientRecord(c)
	for i, u := range created {
		rec.Users = append(rec.Users, s.userRecord(u, tokens[i]))
	}
	writeJSON(w, http.StatusCreated, []clientRecord{rec})
	return nil
}

func (s *Server) clientRecord(c db.Client) clientRecord {
	return clientRecord{ID: c.ID, Name: c.Name, DocumentType: strconv.Itoa(c.DocumentType), DocumentNumber: c.DocumentNumber,
		Phone: c.Phone, CEP: c.CEP, Address: c.Address, AddressNumber: c.AddressNumber, AddressComp: c.AddressComp,
		AddressNH: c.AddressNH, City: c.City, State: c.State, CreateURL: c.CreateURL, CreateIP: c.CreateIP,
		CreatedAt: s.fmtTime(c.CreatedAt, layoutDateTime), UpdatedAt: s.fmtTime(c.UpdatedAt, layoutDateTime)}
}

// createUser is POST /api/v1/clients/{client_id}/users.
func (s *Server) createUser(w http.ResponseWriter, r *http.Request) error {
	clientID, err := pathID(r, "client_id")
	if err != nil {
		return err
	}
	in, err := s.readInput(w, r)
	if err != nil {
		return err
	}
	if err := s.operatorOnly(r, in); err != nil {
		return err
	}
	if _, err := s.cfg.DB.Client(r.Context(), clientID); errors.Is(err, db.ErrNotFound) {
		return fail(http.StatusNotFound, "client not found")
	} else if err != nil {
		return err
	}
	errs := fieldErrors{}
	u, pass := s.userInput(newFields(in, errs))
	if u.Email != "" {
		if _, err := s.cfg.DB.UserByEmail(r.Context(), u.Email); err == nil {
			errs.add("email", "has already been taken")
		}
	}
	if err := errs.err(); err != nil {
		return err
	}
	if err := s.hashPassword(&u, pass); err != nil {
		return err
	}
	u.ClientID = clientID
	created, err := s.cfg.DB.CreateUser(r.Context(), u)
	if errors.Is(err, db.ErrDuplicate) {
		return fieldErrors{"email": {"has already been taken"}}.err()
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, []userRecord{s.userRecord(created, "")})
	return nil
}

// blockClient is GET /api/client/{block|unblock}/{token}/{document}: the
// partner (operator) token blocks or unblocks a client by its document
// digits. Blocking removes the client's cameras from the registry, so they
// stop recording; unblocking puts them back.
func (s *Server) blockClient(block bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := s.authenticate(r.Context(), r.PathValue("token"))
		if err != nil {
			return err
		}
		if !p.operator {
			return errNotOperator
		}
		doc := r.PathValue("document")
		if doc == "" || digitsOnly(doc) != doc {
			return fail(http.StatusBadRequest, "document must be digits only")
		}
		c, err := s.cfg.DB.ClientByDocument(r.Context(), doc)
		if errors.Is(err, db.ErrNotFound) {
			return fail(http.StatusNotFound, "client not found")
		}
		if err != nil {
			return err
		}
		// The database and registry writes are one step for RepairRegistry.
		s.regMu.Lock()
		defer s.regMu.Unlock()
		if err := s.cfg.DB.SetClientBlocked(r.Context(), c.ID, block, s.now()); err != nil {
			return err
		}
		c.Blocked = block
		if err := s.syncClientCameras(r.Context(), c); err != nil {
			return err
		}
		if block {
			s.blockedGaps(r.Context(), c.ID)
		}
		writeJSON(w, http.StatusOK, envelope{Code: 0, Msg: ""})
		return nil
	}
}

// blockUser is GET /api/user/{block|unblock}/{token}/{id}: the operator,
// or an ADMIN user (user_type 2) of the same client, blocks or unblocks a
// user. A blocked user's tokens are refused from the next request on.
func (s *Server) blockUser(block bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := s.authenticate(r.Context(), r.PathValue("token"))
		if err != nil {
			return err
		}
		id, err := pathID(r, "id")
		if err != nil {
			return err
		}
		if !p.operator && p.user.UserType != 2 {
			return fail(http.StatusForbidden, "only an ADMIN user or the operator blocks users")
		}
		u, err := s.cfg.DB.User(r.Context(), id)
		if errors.Is(err, db.ErrNotFound) || err == nil && !p.operator && u.ClientID != p.client.ID {
			return fail(http.StatusNotFound, "user not found")
		}
		if err != nil {
			return err
		}
		if err := s.cfg.DB.SetUserBlocked(r.Context(), id, block, p.userID(), s.now()); err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, envelope{Code: 0, Msg: ""})
		return nil
	}
}

// blockedGaps records, for each camera of a client just blocked, a gap of
// cause camera_blocked from now (Config.OnGap).
func (s *Server) blockedGaps(ctx context.Context, clientID int64) {
	if s.cfg.OnGap == nil {
		return
	}
	cams, err := s.cfg.DB.CamerasOfClient(ctx, clientID)
	if err != nil {
		s.log.Warn("blocked cameras' gaps not recorded", zap.Error(err))
		return
	}
	for _, c := range cams {
		s.cfg.OnGap(status.Gap{Camera: camID(c.ID), StartMs: s.now().UnixMilli(), Cause: status.CauseCameraBlocked})
	}
}
